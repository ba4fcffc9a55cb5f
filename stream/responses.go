package stream

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/sse"
)

// responsesDecoder reads the OpenAI Responses API stream: semantic events
// named by "type" (response.created, response.output_text.delta,
// response.function_call_arguments.delta/.done, response.output_item.added
// /.done, response.reasoning_summary_text.delta, response.completed /
// response.failed / response.incomplete, error). There is no [DONE]: the
// three response.* terminal events end it.
type responsesDecoder struct {
	tools openTools // keyed by output_index
	// textLen is the bytes of answer text emitted so far, and parts the
	// output_text parts by (output_index, content_index): where each
	// starts in the answer and its text, which annotations index by
	// character.
	textLen int
	parts   map[[2]int]*responsesPart
}

// responsesPart is one output_text content part as the answer has it.
type responsesPart struct {
	start int
	text  citable
}

//jsonx:reader
type responsesEvent struct {
	Type         string             `json:"type"`
	OutputIndex  int                `json:"output_index"`
	ContentIndex int                `json:"content_index"`
	SummaryIndex int                `json:"summary_index"`
	Delta        string             `json:"delta"`
	Arguments    string             `json:"arguments"`
	Item         *responsesItem     `json:"item"`
	Response     *responsesResponse `json:"response"`
	// Annotation is response.output_text.annotation.added's.
	Annotation *responsesAnnotation `json:"annotation"`
	// The top-level "error" event: {"type":"error","code","message","param"}.
	Code    rawJSON   `json:"code"`
	Message string    `json:"message"`
	Error   *apiError `json:"error"`
}

type responsesItem struct {
	_         incomparable
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// responsesAnnotation is a citation on output text: url_citation (url,
// title, start_index, end_index), file_citation (file_id, filename,
// index), container_file_citation (file_id, filename, start_index,
// end_index). Indexes count characters (code points) of the part's text.
type responsesAnnotation struct {
	_          incomparable
	Type       string `json:"type"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	StartIndex int    `json:"start_index"`
	EndIndex   *int   `json:"end_index"`
	Index      *int   `json:"index"`
	FileID     string `json:"file_id"`
	Filename   string `json:"filename"`
}

type responsesResponse struct {
	_                 incomparable
	Status            string               `json:"status"`
	Error             *apiError            `json:"error"`
	IncompleteDetails *responsesIncomplete `json:"incomplete_details"`
	Usage             *responsesUsage      `json:"usage"`
}

type responsesIncomplete struct {
	Reason string `json:"reason"`
}

type responsesUsage struct {
	InputTokens         int                    `json:"input_tokens"`
	OutputTokens        int                    `json:"output_tokens"`
	TotalTokens         int                    `json:"total_tokens"`
	OutputTokensDetails responsesTokensDetails `json:"output_tokens_details"`
}

type responsesTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// responsesIgnored are events that carry nothing the answer needs (their
// content also arrives as deltas, or they only announce structure).
var responsesIgnored = map[string]bool{
	"response.created": true, "response.in_progress": true, "response.queued": true,
	"response.content_part.added": true, "response.content_part.done": true,
	"response.output_text.done": true,
	"response.refusal.done":     true, "response.reasoning_summary_part.done": true,
	"response.reasoning_summary_text.done": true, "response.reasoning_text.done": true,
}

func (d *responsesDecoder) Dialect() Dialect  { return DialectResponses }
func (d *responsesDecoder) EndMarker() string { return "response.completed" }
func (d *responsesDecoder) Close(func(Event)) {}

func (d *responsesDecoder) Decode(ev sse.Event, emit func(Event)) error {
	var e responsesEvent
	if err := eventError(e.decode(ev.Data)); err != nil {
		return err
	}
	typ := cmp.Or(e.Type, ev.Type) // the data's type, else the SSE event's
	switch typ {
	case "response.output_text.delta", "response.refusal.delta":
		if e.Delta != "" {
			if typ == "response.output_text.delta" {
				d.part(e.OutputIndex, e.ContentIndex).text.add(e.Delta)
			}
			d.textLen += len(e.Delta)
			emit(Event{Kind: KindText, Text: e.Delta})
		}
	case "response.output_text.annotation.added":
		return d.annotation(&e, emit)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if e.Delta != "" {
			emit(Event{Kind: KindThinking, Text: e.Delta})
		}
	case "response.reasoning_summary_part.added":
		if e.SummaryIndex > 0 {
			// Summary parts are separate paragraphs of one summary.
			emit(Event{Kind: KindThinking, Text: "\n\n"})
		}
	case "response.output_item.added":
		if e.Item != nil && e.Item.Type == "function_call" {
			t := d.tools.open(e.OutputIndex)
			t.id, t.name = firstNonEmpty(e.Item.CallID, e.Item.ID), e.Item.Name
			t.args.WriteString(e.Item.Arguments)
			emit(Event{Kind: KindToolCallDelta, Index: e.OutputIndex, ID: t.id, Name: t.name, Text: e.Item.Arguments})
		}
	case "response.function_call_arguments.delta":
		t := d.tools.get(e.OutputIndex)
		if t == nil {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": arguments for output_index "+strconv.Itoa(e.OutputIndex)+" before its output_item.added", ErrUnknownToolCall)
		}
		t.args.WriteString(e.Delta)
		emit(Event{Kind: KindToolCallDelta, Index: e.OutputIndex, Text: e.Delta})
	case "response.function_call_arguments.done":
		t := d.tools.get(e.OutputIndex)
		if t == nil {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": arguments.done for output_index "+strconv.Itoa(e.OutputIndex)+" before its output_item.added", ErrUnknownToolCall)
		}
		d.finish(t, e.Arguments, emit)
	case "response.output_item.done":
		if e.Item != nil && e.Item.Type == "function_call" {
			t := d.tools.get(e.OutputIndex)
			if t == nil {
				t = d.tools.open(e.OutputIndex)
				t.id, t.name = firstNonEmpty(e.Item.CallID, e.Item.ID), e.Item.Name
			}
			d.finish(t, e.Item.Arguments, emit)
		}
	case "response.completed", "response.incomplete", "response.failed":
		return d.terminal(typ, &e, emit)
	case "error":
		perr := &ProviderError{Dialect: DialectResponses, Type: rawString(e.Code), Message: e.Message}
		if e.Error != nil {
			perr = e.Error.provider(DialectResponses)
		}
		if perr.Type == "" {
			perr.Type = "error"
		}
		emit(Event{Kind: KindError, Err: perr})
	default:
		if responsesIgnored[typ] || isResponsesToolProgress(typ) {
			return nil
		}
		return errtext.Wrap(ErrUnknownEvent.Error()+": "+strconv.Quote(typ), ErrUnknownEvent)
	}
	return nil
}

// part returns the output_text part (output, content), opening it where
// the answer's text is now.
func (d *responsesDecoder) part(output, content int) *responsesPart {
	key := [2]int{output, content}
	if p := d.parts[key]; p != nil {
		return p
	}
	if d.parts == nil {
		d.parts = make(map[[2]int]*responsesPart)
	}
	p := &responsesPart{start: d.textLen}
	d.parts[key] = p
	return p
}

// annotation turns a url_citation or a file citation into a citation at
// the end of the passage it annotates; other annotations (file_path) cite
// nothing.
func (d *responsesDecoder) annotation(e *responsesEvent, emit func(Event)) error {
	an := e.Annotation
	if an == nil {
		return errtext.Wrap(ErrUnknownEvent.Error()+": output_text.annotation.added without an annotation", ErrUnknownEvent)
	}
	end := an.EndIndex
	if end == nil {
		end = an.Index
	}
	at := CiteHere
	if p := d.parts[[2]int{e.OutputIndex, e.ContentIndex}]; p != nil && end != nil {
		if o := p.text.at(*end, byteOffset); o != CiteHere {
			at = p.start + o
		}
	}
	switch an.Type {
	case "url_citation":
		if an.URL == "" {
			return errtext.Wrap(ErrUnknownEvent.Error()+": url_citation without a url", ErrUnknownEvent)
		}
		emit(Event{Kind: KindCitation, URL: an.URL, Title: an.Title, Index: at})
	case "file_citation", "container_file_citation":
		if an.FileID == "" {
			return errtext.Wrap(ErrUnknownEvent.Error()+": "+an.Type+" without a file_id", ErrUnknownEvent)
		}
		emit(Event{Kind: KindCitation, ID: an.FileID, Title: an.Filename, Name: an.Filename, Index: at})
	}
	return nil
}

// byteOffset is where the n-th character (code point) of s starts, or
// len(s) when s is shorter.
func byteOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func (d *responsesDecoder) terminal(typ string, e *responsesEvent, emit func(Event)) error {
	r := e.Response
	if r == nil {
		return errtext.Wrap(ErrUnknownEvent.Error()+": "+typ+" without a response object", ErrUnknownEvent)
	}
	if u := r.Usage; u != nil {
		emit(Event{Kind: KindUsage, Usage: Usage{
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
			ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
		}})
	}
	if typ == "response.failed" {
		perr := &ProviderError{Dialect: DialectResponses, Type: "failed", Message: "the response failed"}
		if r.Error != nil {
			perr = r.Error.provider(DialectResponses)
		}
		emit(Event{Kind: KindError, Err: perr})
		return nil
	}
	for _, t := range d.tools.order {
		d.finish(t, "", emit)
	}
	// response.incomplete is a proper end (the model hit a limit, e.g.
	// max_output_tokens); its reason is the finish reason, as "length" is
	// for Chat Completions.
	reason := r.Status
	if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
		reason = r.IncompleteDetails.Reason
	}
	if reason == "" {
		reason = strings.TrimPrefix(typ, "response.")
	}
	emit(Event{Kind: KindFinish, Reason: reason})
	emit(Event{Kind: KindEnd})
	return nil
}

// isResponsesToolProgress reports the progress events of built-in tools
// (web search, file search, code interpreter, image generation, MCP…):
// they carry no answer text.
func isResponsesToolProgress(typ string) bool {
	return strings.HasPrefix(typ, "response.") &&
		(strings.Contains(typ, "_call.") || strings.Contains(typ, "_call_") ||
			strings.HasPrefix(typ, "response.mcp_") || strings.HasPrefix(typ, "response.custom_tool_call"))
}

// finish closes a call once; args, when the event carries them, are the
// provider's own complete arguments and win over the accumulated deltas.
func (d *responsesDecoder) finish(t *openTool, args string, emit func(Event)) {
	if t.done {
		return
	}
	t.done = true
	if args == "" {
		args = t.args.String()
	}
	emit(Event{Kind: KindToolCallDone, Index: t.index, ID: t.id, Name: t.name, Text: args})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
