package sim

// --- AG-UI 1.0 -----------------------------------------------------------------

// agui speaks AG-UI 1.0 as @ag-ui/encoder's EventEncoder writes it
// (stream/testdata/ag-ui-*.sse are the SDK's own): one data: event per
// event, no event names; a run opened by RUN_STARTED, its reasoning, text
// and tool call each a message of start, content and end events, and
// RUN_FINISHED, with the usage, as the end marker.
type agui struct{}

func (agui) ev(data string) Message { return Message{Data: data} }

func (a agui) run(g *Generator) string {
	return `"threadId":` + q("thread_"+g.p.ID) + `,"runId":` + q("run_"+g.p.ID)
}

func (a agui) msgID(g *Generator) string { return q("msg_" + g.p.ID + "_" + itoa(g.block)) }

func (a agui) callID(g *Generator) string { return q("call_" + g.answer.Tool.ID) }

func (a agui) start(g *Generator) []Message {
	return []Message{a.ev(`{"type":"RUN_STARTED",` + a.run(g) + `,"protocolVersion":"1.0"}`)}
}

func (a agui) begin(g *Generator, kind int) []Message {
	switch kind {
	case phaseThinking:
		return []Message{a.ev(`{"type":"REASONING_START","messageId":` + a.msgID(g) + `}`),
			a.ev(`{"type":"REASONING_MESSAGE_START","messageId":` + a.msgID(g) + `,"role":"reasoning"}`)}
	case phaseTool:
		return []Message{a.ev(`{"type":"TOOL_CALL_START","toolCallId":` + a.callID(g) + `,"toolCallName":` + q(g.answer.Tool.Name) + `}`)}
	}
	return []Message{a.ev(`{"type":"TEXT_MESSAGE_START","messageId":` + a.msgID(g) + `,"role":"assistant"}`)}
}

func (a agui) delta(g *Generator, kind int, tok string, _ bool) []Message {
	switch kind {
	case phaseThinking:
		return []Message{a.ev(`{"type":"REASONING_MESSAGE_CONTENT","messageId":` + a.msgID(g) + `,"delta":` + q(tok) + `}`)}
	case phaseTool:
		return []Message{a.ev(`{"type":"TOOL_CALL_ARGS","toolCallId":` + a.callID(g) + `,"delta":` + q(tok) + `}`)}
	}
	return []Message{a.ev(`{"type":"TEXT_MESSAGE_CONTENT","messageId":` + a.msgID(g) + `,"delta":` + q(tok) + `}`)}
}

func (a agui) end(g *Generator, kind int) []Message {
	var ms []Message
	switch kind {
	case phaseThinking:
		ms = []Message{a.ev(`{"type":"REASONING_MESSAGE_END","messageId":` + a.msgID(g) + `}`),
			a.ev(`{"type":"REASONING_END","messageId":` + a.msgID(g) + `}`)}
	case phaseTool:
		ms = []Message{a.ev(`{"type":"TOOL_CALL_END","toolCallId":` + a.callID(g) + `}`)}
	default:
		ms = []Message{a.ev(`{"type":"TEXT_MESSAGE_END","messageId":` + a.msgID(g) + `}`)}
	}
	g.block++
	return ms
}

// finish sends nothing: RUN_FINISHED, the end marker, carries the outcome
// and the usage (NoEnd leaves it out).
func (agui) finish(*Generator, string) []Message { return nil }

func (a agui) endMarker(g *Generator) []Message {
	p, c := g.p.PromptTokens, completionTokens(g)
	return []Message{a.ev(`{"type":"RUN_FINISHED",` + a.run(g) + `,"outcome":{"type":"success"},"usage":[{"model":` + q(g.p.Model) +
		`,"inputTokens":` + itoa(p) + `,"outputTokens":` + itoa(c) + `,"totalTokens":` + itoa(p+c) + `}]}`)}
}

// failure is RUN_ERROR, terminal: AG-UI sends nothing after it.
func (a agui) failure(_ *Generator, msg string) []Message {
	return []Message{a.ev(`{"type":"RUN_ERROR","message":` + q(msg) + `,"code":"upstream_error"}`)}
}
