package sim

import (
	"strconv"
	"time"
)

// --- Gemini streamGenerateContent?alt=sse ------------------------------

type gemini struct{}

func (gemini) chunk(g *Generator, parts, finish string) Message {
	p, c := g.p.PromptTokens, completionTokens(g)
	return Message{Data: `{"candidates":[{"content":{"parts":` + parts + `,"role":"model"}` + finish + `,"index":0}],"usageMetadata":{"promptTokenCount":` +
		itoa(p) + `,"candidatesTokenCount":` + itoa(c) + `,"totalTokenCount":` + itoa(p+c) + `},"modelVersion":` + q(g.p.Model) + `,"responseId":` + q(g.p.ID) + `}`}
}

func (gemini) start(*Generator) []Message      { return nil }
func (gemini) begin(*Generator, int) []Message { return nil }
func (gemini) end(*Generator, int) []Message   { return nil }
func (gemini) endMarker(*Generator) []Message  { return nil }
func (gemini) finishReason(reason string) string {
	switch reason {
	case "length":
		return "MAX_TOKENS"
	}
	return "STOP"
}

func (gm gemini) delta(g *Generator, kind int, tok string, _ bool) []Message {
	switch kind {
	case phaseThinking:
		return []Message{gm.chunk(g, `[{"text":`+q(tok)+`,"thought":true}]`, "")}
	case phaseTool:
		// Gemini sends a function call whole, in one part, once its
		// arguments are complete.
		if g.rest != "" {
			return nil
		}
		t := g.answer.Tool
		return []Message{gm.chunk(g, `[{"functionCall":{"name":`+q(t.Name)+`,"args":`+t.Arguments+`}}]`, "")}
	}
	return []Message{gm.chunk(g, `[{"text":`+q(tok)+`}]`, "")}
}

// finish carries the end marker itself: Gemini's stream is complete with the
// candidate that has a finish reason (and a clean close), so NoEnd drops it.
func (gm gemini) finish(g *Generator, reason string) []Message {
	if g.p.NoEnd {
		return nil
	}
	return []Message{gm.chunk(g, `[{"text":""}]`, `,"finishReason":`+q(gm.finishReason(reason))+geminiGrounding(g))}
}

func (gemini) failure(_ *Generator, msg string) []Message {
	return []Message{{Data: `{"error":{"code":500,"message":` + q(msg) + `,"status":"INTERNAL"}}`}}
}

// --- Ollama /api/chat (NDJSON; over SSE each line is one data: event) ----

type ollama struct{}

const ollamaTime = "2026-01-01T00:00:00.000000000Z"

func (ollama) line(g *Generator, message string, done string) Message {
	return Message{Data: `{"model":` + q(g.p.Model) + `,"created_at":"` + ollamaTime + `","message":` + message + `,"done":` + done + `}`}
}

func (ollama) start(*Generator) []Message      { return nil }
func (ollama) begin(*Generator, int) []Message { return nil }
func (ollama) end(*Generator, int) []Message   { return nil }

func (o ollama) delta(g *Generator, kind int, tok string, _ bool) []Message {
	switch kind {
	case phaseThinking:
		return []Message{o.line(g, `{"role":"assistant","content":"","thinking":`+q(tok)+`}`, "false")}
	case phaseTool:
		if g.rest != "" {
			return nil
		}
		t := g.answer.Tool
		return []Message{o.line(g, `{"role":"assistant","content":"","tool_calls":[{"function":{"name":`+q(t.Name)+`,"arguments":`+t.Arguments+`}}]}`, "false")}
	}
	return []Message{o.line(g, `{"role":"assistant","content":`+q(tok)+`}`, "false")}
}

func (ollama) finish(*Generator, string) []Message { return nil }

func (o ollama) endMarker(g *Generator) []Message {
	reason := "stop"
	if g.truncated {
		reason = "length"
	}
	c := completionTokens(g)
	evalNs := int64(c) * int64(g.p.Gap/time.Nanosecond)
	m := o.line(g, `{"role":"assistant","content":""}`, "true")
	m.Data = m.Data[:len(m.Data)-1] + `,"done_reason":` + q(reason) + `,"total_duration":` + strconv.FormatInt(evalNs+int64(g.p.TTFT), 10) +
		`,"prompt_eval_count":` + itoa(g.p.PromptTokens) + `,"eval_count":` + itoa(c) + `,"eval_duration":` + strconv.FormatInt(evalNs, 10) + `}`
	return []Message{m}
}

func (ollama) failure(_ *Generator, msg string) []Message {
	return []Message{{Data: `{"error":` + q(msg) + `}`}}
}

// --- plain {"delta": "..."} ---------------------------------------------

type plain struct{}

func (plain) start(*Generator) []Message          { return nil }
func (plain) begin(*Generator, int) []Message     { return nil }
func (plain) end(*Generator, int) []Message       { return nil }
func (plain) finish(*Generator, string) []Message { return nil }

func (plain) delta(_ *Generator, kind int, tok string, _ bool) []Message {
	switch kind {
	case phaseThinking:
		return []Message{{Data: `{"thinking":` + q(tok) + `}`}}
	case phaseTool:
		return nil // plain carries text only
	}
	return []Message{{Data: `{"delta":` + q(tok) + `}`}}
}

func (plain) endMarker(*Generator) []Message { return []Message{{Data: "[DONE]"}} }

func (plain) failure(_ *Generator, msg string) []Message {
	return []Message{{Data: `{"error":` + q(msg) + `}`}, {Data: "[DONE]"}}
}

// --- AI SDK UI message stream ------------------------------------------------

// aisdk speaks the AI SDK's UI message stream as streamText's
// toUIMessageStreamResponse writes it (stream/testdata/ai-sdk-*.sse are
// the package's own): one step, its blocks opened and closed, the tool's
// input streamed then available, finish and [DONE] at the end.
type aisdk struct{}

func (aisdk) part(data string) Message { return Message{Data: data} }

func (a aisdk) start(*Generator) []Message {
	return []Message{a.part(`{"type":"start"}`), a.part(`{"type":"start-step"}`)}
}

func (a aisdk) begin(g *Generator, kind int) []Message {
	switch kind {
	case phaseThinking:
		return []Message{a.part(`{"type":"reasoning-start","id":` + q("r"+itoa(g.block)) + `}`)}
	case phaseTool:
		t := g.answer.Tool
		return []Message{a.part(`{"type":"tool-input-start","toolCallId":` + q("call_"+t.ID) + `,"toolName":` + q(t.Name) + `}`)}
	}
	return []Message{a.part(`{"type":"text-start","id":` + q("t"+itoa(g.block)) + `}`)}
}

func (a aisdk) delta(g *Generator, kind int, tok string, _ bool) []Message {
	switch kind {
	case phaseThinking:
		return []Message{a.part(`{"type":"reasoning-delta","id":` + q("r"+itoa(g.block)) + `,"delta":` + q(tok) + `}`)}
	case phaseTool:
		return []Message{a.part(`{"type":"tool-input-delta","toolCallId":` + q("call_"+g.answer.Tool.ID) + `,"inputTextDelta":` + q(tok) + `}`)}
	}
	return []Message{a.part(`{"type":"text-delta","id":` + q("t"+itoa(g.block)) + `,"delta":` + q(tok) + `}`)}
}

func (a aisdk) end(g *Generator, kind int) []Message {
	var m Message
	switch kind {
	case phaseThinking:
		m = a.part(`{"type":"reasoning-end","id":` + q("r"+itoa(g.block)) + `}`)
	case phaseTool:
		t := g.answer.Tool
		m = a.part(`{"type":"tool-input-available","toolCallId":` + q("call_"+t.ID) + `,"toolName":` + q(t.Name) + `,"input":` + t.Arguments + `}`)
	default:
		m = a.part(`{"type":"text-end","id":` + q("t"+itoa(g.block)) + aisdkCitations(g) + `}`)
	}
	g.block++
	return []Message{m}
}

// finish closes the step; the finish part is the end marker, so it waits
// for endMarker (NoEnd leaves it out).
func (a aisdk) finish(g *Generator, reason string) []Message {
	switch reason {
	case "tool_calls":
		reason = "tool-calls"
	}
	g.finish = reason
	return []Message{a.part(`{"type":"finish-step"}`)}
}

func (a aisdk) endMarker(g *Generator) []Message {
	return []Message{a.part(`{"type":"finish","finishReason":` + q(g.finish) + `}`), a.part("[DONE]")}
}

func (a aisdk) failure(_ *Generator, msg string) []Message {
	return []Message{a.part(`{"type":"error","errorText":` + q(msg) + `}`), a.part("[DONE]")}
}
