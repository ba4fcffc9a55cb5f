package sim

import (
	"strconv"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/stream"
)

// dialect turns the steps of a generation into one provider's events. The
// shapes follow each provider's published streaming format, trimmed of
// fields no client reads.
type dialect interface {
	start(g *Generator) []Message
	begin(g *Generator, kind int) []Message
	delta(g *Generator, kind int, tok string, first bool) []Message
	end(g *Generator, kind int) []Message
	finish(g *Generator, reason string) []Message
	endMarker(g *Generator) []Message
	failure(g *Generator, msg string) []Message
}

var dialects = map[stream.Dialect]dialect{
	stream.DialectOpenAI:    openai{},
	stream.DialectAnthropic: anthropic{},
	stream.DialectResponses: responses{},
	stream.DialectGemini:    gemini{},
	stream.DialectOllama:    ollama{},
	stream.DialectPlain:     plain{},
	stream.DialectAISDK:     aisdk{},
	stream.DialectAGUI:      agui{},
}

// q quotes s as a JSON string without HTML escaping (providers send < and >
// as they are, and the xss corpus must arrive byte for byte).
func q(s string) string { return string(jsonx.AppendStringKeepHTML(make([]byte, 0, len(s)+2), s)) }

func itoa(n int) string { return strconv.Itoa(n) }

func completionTokens(g *Generator) int { return g.tokens }

// --- OpenAI Chat Completions -------------------------------------------

type openai struct{}

func (openai) chunk(g *Generator, choices string) Message {
	return Message{Data: `{"id":` + q("chatcmpl-"+g.p.ID) + `,"object":"chat.completion.chunk","created":` +
		strconv.FormatInt(g.p.Created, 10) + `,"model":` + q(g.p.Model) +
		`,"system_fingerprint":"fp_trickle","choices":` + choices + `}`}
}

func (o openai) delta1(g *Generator, delta string) Message {
	return o.chunk(g, `[{"index":0,"delta":`+delta+`,"logprobs":null,"finish_reason":null}]`)
}

func (openai) start(*Generator) []Message { return nil }

func (o openai) begin(g *Generator, kind int) []Message {
	if kind == phaseTool {
		t := g.answer.Tool
		return []Message{o.delta1(g, `{"tool_calls":[{"index":0,"id":`+q(t.ID)+`,"type":"function","function":{"name":`+q(t.Name)+`,"arguments":""}}]}`)}
	}
	if g.tokens == 0 {
		return []Message{o.delta1(g, `{"role":"assistant","content":""}`)}
	}
	return nil
}

func (o openai) delta(g *Generator, kind int, tok string, _ bool) []Message {
	switch kind {
	case phaseThinking:
		return []Message{o.delta1(g, `{"reasoning_content":`+q(tok)+`}`)}
	case phaseTool:
		return []Message{o.delta1(g, `{"tool_calls":[{"index":0,"function":{"arguments":`+q(tok)+`}}]}`)}
	}
	return []Message{o.delta1(g, `{"content":`+q(tok)+`}`)}
}

// end gives the text its citations, as a search model does: one delta of
// url_citation annotations after the content.
func (o openai) end(g *Generator, kind int) []Message {
	if kind != phaseText || len(g.streamedCites()) == 0 {
		return nil
	}
	return []Message{o.delta1(g, `{"annotations":`+openaiAnnotations(g)+`}`)}
}

func (o openai) finish(g *Generator, reason string) []Message {
	p, c := g.p.PromptTokens, completionTokens(g)
	return []Message{
		o.chunk(g, `[{"index":0,"delta":{},"logprobs":null,"finish_reason":`+q(reason)+`}]`),
		o.chunk(g, `[],"usage":{"prompt_tokens":`+itoa(p)+`,"completion_tokens":`+itoa(c)+`,"total_tokens":`+itoa(p+c)+`}`),
	}
}

func (openai) endMarker(*Generator) []Message { return []Message{{Data: "[DONE]"}} }

func (openai) failure(_ *Generator, msg string) []Message {
	return []Message{
		{Data: `{"error":{"message":` + q(msg) + `,"type":"server_error","param":null,"code":"upstream_error"}}`},
		{Data: "[DONE]"},
	}
}

// --- Anthropic Messages --------------------------------------------------

type anthropic struct{}

func (anthropic) ev(typ, data string) Message { return Message{Event: typ, Data: data} }

func (a anthropic) start(g *Generator) []Message {
	out := []Message{
		a.ev("message_start", `{"type":"message_start","message":{"id":`+q("msg_"+g.p.ID)+`,"type":"message","role":"assistant","model":`+q(g.p.Model)+
			`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+itoa(g.p.PromptTokens)+`,"output_tokens":1}}}`),
		a.ev("ping", `{"type":"ping"}`),
	}
	if len(g.answer.Sources) > 0 {
		out = append(out, anthropicSearch(g)...)
	}
	return out
}

func (a anthropic) begin(g *Generator, kind int) []Message {
	var block string
	switch kind {
	case phaseThinking:
		block = `{"type":"thinking","thinking":"","signature":""}`
	case phaseTool:
		t := g.answer.Tool
		block = `{"type":"tool_use","id":` + q("toolu_"+t.ID) + `,"name":` + q(t.Name) + `,"input":{}}`
	default:
		block = `{"type":"text","text":""}`
	}
	out := []Message{a.ev("content_block_start", `{"type":"content_block_start","index":`+itoa(g.block)+`,"content_block":`+block+`}`)}
	if kind == phaseText && len(g.answer.Cites) > 0 {
		g.cite = 0
		out = append(out, anthropicCitation(g, 0)...)
	}
	return out
}

func (a anthropic) delta(g *Generator, kind int, tok string, _ bool) []Message {
	if kind == phaseText && len(g.answer.Cites) > 0 {
		return anthropicText(g, tok)
	}
	var d string
	switch kind {
	case phaseThinking:
		d = `{"type":"thinking_delta","thinking":` + q(tok) + `}`
	case phaseTool:
		d = `{"type":"input_json_delta","partial_json":` + q(tok) + `}`
	default:
		d = `{"type":"text_delta","text":` + q(tok) + `}`
	}
	out := []Message{a.ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(g.block)+`,"delta":`+d+`}`)}
	// The API sends pings now and then during long answers.
	if g.tokens%64 == 0 {
		out = append(out, a.ev("ping", `{"type":"ping"}`))
	}
	return out
}

func (a anthropic) end(g *Generator, kind int) []Message {
	var out []Message
	if kind == phaseThinking {
		out = append(out, a.ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(g.block)+
			`,"delta":{"type":"signature_delta","signature":"c2ltdWxhdGVkLXNpZ25hdHVyZQ=="}}`))
	}
	out = append(out, a.ev("content_block_stop", `{"type":"content_block_stop","index":`+itoa(g.block)+`}`))
	g.block++
	return out
}

func (a anthropic) finish(g *Generator, reason string) []Message {
	seq := "null"
	switch reason {
	case "stop":
		reason = "end_turn"
		if g.stopSeq != "" {
			reason, seq = "stop_sequence", q(g.stopSeq)
		}
	case "length":
		reason = "max_tokens"
	case "tool_calls":
		reason = "tool_use"
	}
	return []Message{a.ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":`+q(reason)+
		`,"stop_sequence":`+seq+`},"usage":{"output_tokens":`+itoa(completionTokens(g))+`}}`)}
}

func (a anthropic) endMarker(*Generator) []Message {
	return []Message{a.ev("message_stop", `{"type":"message_stop"}`)}
}

func (a anthropic) failure(_ *Generator, msg string) []Message {
	return []Message{
		a.ev("error", `{"type":"error","error":{"type":"api_error","message":`+q(msg)+`}}`),
		a.ev("message_stop", `{"type":"message_stop"}`),
	}
}

// --- OpenAI Responses ----------------------------------------------------

type responses struct{}

func (responses) ev(g *Generator, typ, fields string) Message {
	m := Message{Event: typ, Data: `{"type":` + q(typ) + `,"sequence_number":` + itoa(g.seqNum) + fields + `}`}
	g.seqNum++
	return m
}

func (r responses) response(g *Generator, status, extra string) string {
	return `,"response":{"id":` + q("resp_"+g.p.ID) + `,"object":"response","created_at":` + strconv.FormatInt(g.p.Created, 10) +
		`,"status":` + q(status) + `,"model":` + q(g.p.Model) + `,"output":[]` + extra + `}`
}

func (r responses) start(g *Generator) []Message {
	return []Message{
		r.ev(g, "response.created", r.response(g, "in_progress", `,"usage":null`)),
		r.ev(g, "response.in_progress", r.response(g, "in_progress", `,"usage":null`)),
	}
}

func (responses) itemID(g *Generator, kind int) string {
	switch kind {
	case phaseThinking:
		return "rs_" + g.p.ID
	case phaseTool:
		return "fc_" + g.p.ID
	}
	return "msg_" + g.p.ID
}

func (r responses) item(g *Generator, kind int, status string, done bool) string {
	id := q(r.itemID(g, kind))
	text := ""
	if done {
		text = string(g.acc)
	}
	switch kind {
	case phaseThinking:
		summary := `[]`
		if done {
			summary = `[{"type":"summary_text","text":` + q(text) + `}]`
		}
		return `{"id":` + id + `,"type":"reasoning","summary":` + summary + `}`
	case phaseTool:
		t := g.answer.Tool
		return `{"id":` + id + `,"type":"function_call","status":` + q(status) + `,"call_id":` + q(t.ID) + `,"name":` + q(t.Name) + `,"arguments":` + q(text) + `}`
	}
	content := `[]`
	if done {
		content = `[{"type":"output_text","text":` + q(text) + `,"annotations":` + responsesAnnotations(g) + `}]`
	}
	return `{"id":` + id + `,"type":"message","status":` + q(status) + `,"role":"assistant","content":` + content + `}`
}

func (r responses) pos(g *Generator) string { return `,"output_index":` + itoa(g.block) }

func (r responses) begin(g *Generator, kind int) []Message {
	out := []Message{r.ev(g, "response.output_item.added", r.pos(g)+`,"item":`+r.item(g, kind, "in_progress", false))}
	id := q(r.itemID(g, kind))
	switch kind {
	case phaseThinking:
		out = append(out, r.ev(g, "response.reasoning_summary_part.added", `,"item_id":`+id+r.pos(g)+`,"summary_index":0,"part":{"type":"summary_text","text":""}`))
	case phaseText:
		out = append(out, r.ev(g, "response.content_part.added", `,"item_id":`+id+r.pos(g)+`,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`))
	}
	return out
}

func (r responses) delta(g *Generator, kind int, tok string, _ bool) []Message {
	id := q(r.itemID(g, kind))
	switch kind {
	case phaseThinking:
		return []Message{r.ev(g, "response.reasoning_summary_text.delta", `,"item_id":`+id+r.pos(g)+`,"summary_index":0,"delta":`+q(tok))}
	case phaseTool:
		return []Message{r.ev(g, "response.function_call_arguments.delta", `,"item_id":`+id+r.pos(g)+`,"delta":`+q(tok))}
	}
	return []Message{r.ev(g, "response.output_text.delta", `,"item_id":`+id+r.pos(g)+`,"content_index":0,"delta":`+q(tok))}
}

func (r responses) end(g *Generator, kind int) []Message {
	id := q(r.itemID(g, kind))
	text := q(string(g.acc))
	var out []Message
	switch kind {
	case phaseThinking:
		out = append(out,
			r.ev(g, "response.reasoning_summary_text.done", `,"item_id":`+id+r.pos(g)+`,"summary_index":0,"text":`+text),
			r.ev(g, "response.reasoning_summary_part.done", `,"item_id":`+id+r.pos(g)+`,"summary_index":0,"part":{"type":"summary_text","text":`+text+`}`))
	case phaseTool:
		out = append(out, r.ev(g, "response.function_call_arguments.done", `,"item_id":`+id+r.pos(g)+`,"arguments":`+text))
	default:
		anns := responsesAnnotations(g)
		for i, c := range g.streamedCites() {
			out = append(out, r.ev(g, "response.output_text.annotation.added", `,"item_id":`+id+r.pos(g)+`,"content_index":0,"annotation_index":`+itoa(i)+
				`,"annotation":`+responsesAnnotation(g, c)))
		}
		out = append(out,
			r.ev(g, "response.output_text.done", `,"item_id":`+id+r.pos(g)+`,"content_index":0,"text":`+text),
			r.ev(g, "response.content_part.done", `,"item_id":`+id+r.pos(g)+`,"content_index":0,"part":{"type":"output_text","text":`+text+`,"annotations":`+anns+`}`))
	}
	out = append(out, r.ev(g, "response.output_item.done", r.pos(g)+`,"item":`+r.item(g, kind, "completed", true)))
	g.block++
	return out
}

func (responses) finish(*Generator, string) []Message { return nil }

func (r responses) endMarker(g *Generator) []Message {
	p, c := g.p.PromptTokens, completionTokens(g)
	return []Message{r.ev(g, "response.completed", r.response(g, "completed",
		`,"usage":{"input_tokens":`+itoa(p)+`,"output_tokens":`+itoa(c)+`,"total_tokens":`+itoa(p+c)+`}`))}
}

func (r responses) failure(g *Generator, msg string) []Message {
	return []Message{
		r.ev(g, "error", `,"code":"server_error","message":`+q(msg)+`,"param":null`),
		r.ev(g, "response.failed", r.response(g, "failed", `,"error":{"code":"server_error","message":`+q(msg)+`}`)),
	}
}
