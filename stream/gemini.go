package stream

import (
	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/sse"
)

// geminiDecoder reads streamGenerateContent?alt=sse: each event is a whole
// GenerateContentResponse; candidates[0].content.parts[] carry text
// (thought:true parts are thinking) and whole functionCall parts; the last
// one has a finishReason and usageMetadata. There is no end event: the
// answer is complete when the stream closes cleanly after a finish reason.
type geminiDecoder struct {
	finished bool
	calls    int
	// chunks are the grounding chunks last given: supports in a later
	// chunk name them by index.
	chunks []geminiGroundingChunk
}

//jsonx:reader
type geminiChunk struct {
	Candidates     []geminiCandidate     `json:"candidates"`
	UsageMetadata  *geminiUsage          `json:"usageMetadata"`
	PromptFeedback *geminiPromptFeedback `json:"promptFeedback"`
	Error          *apiError             `json:"error"`
}

type geminiCandidate struct {
	Index        int           `json:"index"`
	Content      geminiContent `json:"content"`
	FinishReason string        `json:"finishReason"`
	// GroundingMetadata is how a grounded answer (Google Search, a
	// retrieval store) rests on its sources.
	GroundingMetadata *geminiGrounding `json:"groundingMetadata"`
}

// geminiGrounding: groundingChunks are the sources (web: uri, title; or
// retrievedContext), groundingSupports the passages of the answer they
// support, by byte offsets into the answer's text.
type geminiGrounding struct {
	GroundingChunks   []geminiGroundingChunk   `json:"groundingChunks"`
	GroundingSupports []geminiGroundingSupport `json:"groundingSupports"`
}

type geminiGroundingChunk struct {
	Web              *geminiWebSource `json:"web"`
	RetrievedContext *geminiWebSource `json:"retrievedContext"`
}

type geminiWebSource struct {
	_     incomparable
	URI   string `json:"uri"`
	Title string `json:"title"`
}

type geminiGroundingSupport struct {
	Segment               geminiSegment `json:"segment"`
	GroundingChunkIndices []int         `json:"groundingChunkIndices"`
}

type geminiSegment struct {
	_          incomparable
	StartIndex int    `json:"startIndex"`
	EndIndex   int    `json:"endIndex"`
	Text       string `json:"text"`
}

// source is the chunk's page, or false when it names none.
func (c *geminiGroundingChunk) source() (*geminiWebSource, bool) {
	for _, s := range []*geminiWebSource{c.Web, c.RetrievedContext} {
		if s != nil && s.URI != "" {
			return s, true
		}
	}
	return nil, false
}

type geminiContent struct {
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	_            incomparable
	Text         *string             `json:"text"`
	Thought      bool                `json:"thought"`
	FunctionCall *geminiFunctionCall `json:"functionCall"`
}

type geminiFunctionCall struct {
	_    incomparable
	ID   string  `json:"id"`
	Name string  `json:"name"`
	Args rawJSON `json:"args"`
}

type geminiUsage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount"`
	ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

type geminiPromptFeedback struct {
	_                  incomparable
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

func (d *geminiDecoder) Dialect() Dialect  { return DialectGemini }
func (d *geminiDecoder) EndMarker() string { return "a finishReason followed by a clean close" }

func (d *geminiDecoder) Close(emit func(Event)) {
	if d.finished {
		emit(Event{Kind: KindEnd})
	}
}

func (d *geminiDecoder) Decode(ev sse.Event, emit func(Event)) error {
	var c geminiChunk
	if err := eventError(c.decode(ev.Data)); err != nil {
		return err
	}
	if c.Error != nil {
		emit(Event{Kind: KindError, Err: c.Error.provider(DialectGemini)})
		return nil
	}
	if c.Candidates == nil && c.UsageMetadata == nil && c.PromptFeedback == nil {
		return errtext.Wrap(ErrUnknownEvent.Error()+": neither candidates, usageMetadata nor promptFeedback", ErrUnknownEvent)
	}
	for _, cand := range c.Candidates {
		if cand.Index != 0 {
			continue // candidateCount > 1: the answer is the first candidate
		}
		for _, p := range cand.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				// Function calls arrive whole, so each is opened and
				// completed at once.
				i := d.calls
				d.calls++
				fc := p.FunctionCall
				args := rawArgs(fc.Args)
				emit(Event{Kind: KindToolCallDelta, Index: i, ID: fc.ID, Name: fc.Name, Text: args})
				emit(Event{Kind: KindToolCallDone, Index: i, ID: fc.ID, Name: fc.Name, Text: args})
			case p.Text != nil && *p.Text != "":
				k := KindText
				if p.Thought {
					k = KindThinking
				}
				emit(Event{Kind: k, Text: *p.Text})
			}
		}
		if g := cand.GroundingMetadata; g != nil {
			d.grounding(g, emit)
		}
		if cand.FinishReason != "" {
			d.finished = true
			emit(Event{Kind: KindFinish, Reason: cand.FinishReason})
		}
	}
	if u := c.UsageMetadata; u != nil {
		emit(Event{Kind: KindUsage, Usage: Usage{
			InputTokens: u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount,
			ReasoningTokens: u.ThoughtsTokenCount, TotalTokens: u.TotalTokenCount,
		}})
	}
	if pf := c.PromptFeedback; pf != nil && pf.BlockReason != "" && len(c.Candidates) == 0 {
		msg := pf.BlockReasonMessage
		if msg == "" {
			msg = "the prompt was blocked (" + pf.BlockReason + ")"
		}
		emit(Event{Kind: KindError, Err: &ProviderError{Dialect: DialectGemini, Type: pf.BlockReason, Message: msg}})
	}
	return nil
}

// grounding turns grounding metadata into sources, in the order of its
// chunks, and a citation for each chunk a passage rests on, at the
// passage's end. Gemini may repeat the metadata in later chunks; the
// answer keeps each source and citation once.
func (d *geminiDecoder) grounding(g *geminiGrounding, emit func(Event)) {
	if len(g.GroundingChunks) > 0 {
		d.chunks = g.GroundingChunks
	}
	for i := range d.chunks {
		if src, ok := d.chunks[i].source(); ok && len(g.GroundingChunks) > 0 {
			emit(Event{Kind: KindSource, URL: src.URI, Title: src.Title})
		}
	}
	for _, sup := range g.GroundingSupports {
		for _, ci := range sup.GroundingChunkIndices {
			if ci < 0 || ci >= len(d.chunks) {
				continue
			}
			if src, ok := d.chunks[ci].source(); ok {
				emit(Event{Kind: KindCitation, URL: src.URI, Title: src.Title, Index: sup.Segment.EndIndex, Text: sup.Segment.Text})
			}
		}
	}
}
