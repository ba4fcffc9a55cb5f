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
}

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

var geminiCandidateFields = []string{"index", "content", "finishReason"}

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
