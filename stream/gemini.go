package stream

import (
	"fmt"

	"github.com/trickle-dev/trickle/internal/jsonx"
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
	URI   string `json:"uri"`
	Title string `json:"title"`
}

type geminiGroundingSupport struct {
	Segment               geminiSegment `json:"segment"`
	GroundingChunkIndices []int         `json:"groundingChunkIndices"`
}

type geminiSegment struct {
	StartIndex int    `json:"startIndex"`
	EndIndex   int    `json:"endIndex"`
	Text       string `json:"text"`
}

var geminiGroundingFields = []string{"groundingChunks", "groundingSupports"}

func (g *geminiGrounding) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiGroundingFields) {
		case "groundingChunks":
			jsonx.Slice(r, &g.GroundingChunks, func(v *geminiGroundingChunk) { v.read(r) })
		case "groundingSupports":
			jsonx.Slice(r, &g.GroundingSupports, func(v *geminiGroundingSupport) { v.read(r) })
		}
	})
}

var geminiGroundingChunkFields = []string{"web", "retrievedContext"}

func (c *geminiGroundingChunk) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiGroundingChunkFields) {
		case "web":
			readObject(r, &c.Web)
		case "retrievedContext":
			readObject(r, &c.RetrievedContext)
		}
	})
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

var geminiWebSourceFields = []string{"uri", "title"}

func (w *geminiWebSource) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiWebSourceFields) {
		case "uri":
			r.Str(&w.URI)
		case "title":
			r.Str(&w.Title)
		}
	})
}

var geminiGroundingSupportFields = []string{"segment", "groundingChunkIndices"}

func (s *geminiGroundingSupport) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiGroundingSupportFields) {
		case "segment":
			r.Object(func(key string) {
				switch jsonx.Match(key, geminiSegmentFields) {
				case "startIndex":
					r.Int(&s.Segment.StartIndex)
				case "endIndex":
					r.Int(&s.Segment.EndIndex)
				case "text":
					r.Str(&s.Segment.Text)
				}
			})
		case "groundingChunkIndices":
			jsonx.Slice(r, &s.GroundingChunkIndices, func(v *int) { r.Int(v) })
		}
	})
}

var geminiSegmentFields = []string{"startIndex", "endIndex", "text"}

type geminiContent struct {
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         *string             `json:"text"`
	Thought      bool                `json:"thought"`
	FunctionCall *geminiFunctionCall `json:"functionCall"`
}

type geminiFunctionCall struct {
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
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

var geminiChunkFields = []string{"candidates", "usageMetadata", "promptFeedback", "error"}

func (c *geminiChunk) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiChunkFields) {
		case "candidates":
			jsonx.Slice(r, &c.Candidates, func(v *geminiCandidate) { v.read(r) })
		case "usageMetadata":
			readObject(r, &c.UsageMetadata)
		case "promptFeedback":
			readObject(r, &c.PromptFeedback)
		case "error":
			readObject(r, &c.Error)
		}
	})
}

var geminiCandidateFields = []string{"index", "content", "finishReason", "groundingMetadata"}

func (c *geminiCandidate) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiCandidateFields) {
		case "index":
			r.Int(&c.Index)
		case "content":
			r.Object(func(key string) {
				if jsonx.Match(key, geminiContentFields) == "parts" {
					jsonx.Slice(r, &c.Content.Parts, func(v *geminiPart) { v.read(r) })
				}
			})
		case "finishReason":
			r.Str(&c.FinishReason)
		case "groundingMetadata":
			readObject(r, &c.GroundingMetadata)
		}
	})
}

var geminiContentFields = []string{"parts"}

var geminiPartFields = []string{"text", "thought", "functionCall"}

func (p *geminiPart) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiPartFields) {
		case "text":
			r.StrPtr(&p.Text)
		case "thought":
			r.Bool(&p.Thought)
		case "functionCall":
			readObject(r, &p.FunctionCall)
		}
	})
}

var geminiFunctionCallFields = []string{"id", "name", "args"}

func (fc *geminiFunctionCall) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiFunctionCallFields) {
		case "id":
			r.Str(&fc.ID)
		case "name":
			r.Str(&fc.Name)
		case "args":
			fc.Args = rawJSON(r.Raw())
		}
	})
}

var geminiUsageFields = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount"}

func (u *geminiUsage) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiUsageFields) {
		case "promptTokenCount":
			r.Int(&u.PromptTokenCount)
		case "candidatesTokenCount":
			r.Int(&u.CandidatesTokenCount)
		case "thoughtsTokenCount":
			r.Int(&u.ThoughtsTokenCount)
		case "totalTokenCount":
			r.Int(&u.TotalTokenCount)
		}
	})
}

var geminiPromptFeedbackFields = []string{"blockReason", "blockReasonMessage"}

func (pf *geminiPromptFeedback) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, geminiPromptFeedbackFields) {
		case "blockReason":
			r.Str(&pf.BlockReason)
		case "blockReasonMessage":
			r.Str(&pf.BlockReasonMessage)
		}
	})
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
	r, err := jsonx.NewReader(ev.Data)
	if err == nil {
		c.read(&r)
		err = r.Err()
	}
	if err := eventError(err); err != nil {
		return err
	}
	if c.Error != nil {
		emit(Event{Kind: KindError, Err: c.Error.provider(DialectGemini)})
		return nil
	}
	if c.Candidates == nil && c.UsageMetadata == nil && c.PromptFeedback == nil {
		return fmt.Errorf("%w: neither candidates, usageMetadata nor promptFeedback", ErrUnknownEvent)
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
