// Package sim is Trickle's simulated language model: offline and
// deterministic, it streams canned markdown answers token by token in the
// wire format of any supported provider dialect (OpenAI Chat Completions,
// OpenAI Responses, Anthropic Messages, Gemini alt=sse, Ollama, plain, the
// AI SDK's UI message stream: every one of stream.Dialects but text), with
// configurable timing and injected faults.
//
// The same Params always give the same events with the same delays, so
// tests and demos are repeatable. It never touches the network or a clock:
// it only says what to send and how long to wait before sending it; the
// relay does the waiting.
package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/stream"
)

// Dialects lists the wire formats the simulated model speaks: those of
// stream.Dialects, in its order, that it has events for.
func Dialects() []stream.Dialect {
	var out []stream.Dialect
	for _, d := range stream.Dialects() {
		if dialects[d] != nil {
			out = append(out, d)
		}
	}
	return out
}

// ErrUnknownDialect and ErrUnknownAnswer report bad Params.
var (
	ErrUnknownDialect = errors.New("sim: unknown dialect")
	ErrUnknownAnswer  = errors.New("sim: unknown answer")
)

// Params configures one simulated generation.
type Params struct {
	Dialect      stream.Dialect // one of Dialects; "" means openai
	Answer       string         // canned answer name; "" lets Seed pick
	Seed         uint64         // picks the answer (when Answer is empty) and the jitter
	Model        string         // echoed in the events; "" means "trickle-sim"
	ID           string         // response id echoed in the events
	Created      int64          // unix seconds echoed in the events
	PromptTokens int            // reported in usage
	MaxTokens    int            // cap on streamed tokens (finish reason "length"); 0 = none
	TTFT         time.Duration  // delay before the first token
	Gap          time.Duration  // delay between tokens
	Jitter       time.Duration  // each delay varies by up to ± this, seeded
	TokenChars   int            // characters (runes) per token; 0 means 4

	ErrorAfter int           // after this many events, fail with an error event; 0 = never
	StallAfter int           // after this many events, wait Stall more; 0 = never
	Stall      time.Duration // the extra wait of StallAfter
	NoEnd      bool          // omit the dialect's end marker

	// ToolResult, when the conversation ends with a tool's result and no
	// Answer is named, makes the answer a text that reports it.
	ToolResult *ToolResult

	// Tools are the functions the request declares: an answer calls one
	// only if it is there, with arguments valid against its schema (see
	// withTools); with none, the tool-call answer says it has no tool.
	Tools []Tool
	// ToolChoice is "" or "auto" (the model decides), "none" (no call),
	// "required" (some call) or a declared tool's name (that call).
	ToolChoice string
	// Stop lists stop sequences: the text ends before the first one that
	// appears (which is not sent), with finish reason "stop".
	Stop []string
}

// ToolResult is what a tool the simulated model called returned.
type ToolResult struct {
	Name    string // the tool's name; may be empty
	Content string // what it returned, as sent back
}

// Message is one event to send: Delay after the previous one (or after the
// start, for the first), with an optional SSE event type and the data.
type Message struct {
	Delay time.Duration
	Event string
	Data  string
	// Token marks the events that carry a piece of the answer (text,
	// thinking or tool-call delta), as opposed to framing, usage and end
	// events: time to first token counts to the first of them.
	Token bool
}

// Generator yields the events of one simulated generation in order.
type Generator struct {
	p      Params
	answer Answer
	d      dialect
	rng    *rand.Rand

	queue     []Message
	emitted   int // messages returned so far
	tokens    int // content tokens streamed so far
	phase     int
	rest      string // what is left of the current part
	failed    bool
	truncated bool          // MaxTokens cut the answer
	stopSeq   string        // the stop sequence that ended the text, if one did
	reason    string        // the finish reason, once known
	streamed  [3][]byte     // what was streamed of the thinking, text and tool arguments
	carry     time.Duration // time passed with no event to carry it
	started   bool          // a token has been produced (for the ttft)
	done      bool

	// per-dialect bookkeeping
	block  int    // index of the current content block (anthropic, responses)
	cite   int    // the next citation whose passage is streaming (anthropic)
	finish string // the finish reason, for a dialect that sends it with its end marker (ai-sdk)
	acc    []byte // text of the current item (responses *.done events)
	seqNum int    // responses sequence_number
}

const (
	phaseStart = iota
	phaseThinking
	phaseText
	phaseTool
	phaseFinish
	phaseDone
)

// New prepares a generation; it fails on an unknown dialect or answer.
func New(p Params) (*Generator, error) {
	if p.Dialect == "" {
		p.Dialect = stream.DialectOpenAI
	}
	d, ok := dialects[p.Dialect]
	if !ok {
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownDialect, p.Dialect, stream.DialectNames(Dialects()))
	}
	var a Answer
	if p.Answer == "" && p.ToolResult != nil {
		a = toolResultAnswer(*p.ToolResult)
	} else if p.Answer == "" {
		a = Pick(p.Seed)
	} else if a, ok = Lookup(p.Answer); !ok {
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownAnswer, p.Answer, Names())
	}
	a = withTools(a, p.Tools, p.ToolChoice)
	var stopSeq string
	if cut, seq, ok := cutAtStop(a.Text, p.Stop); ok {
		// The model stops generating at the sequence: no text after it,
		// and no tool call (which would have come after the text).
		a.Text, a.Tool, stopSeq = cut, nil, seq
	}
	if p.Model == "" {
		p.Model = "trickle-sim"
	}
	if p.ID == "" {
		p.ID = fmt.Sprintf("sim%016x", p.Seed)
	}
	if p.TokenChars <= 0 {
		p.TokenChars = 4
	}
	return &Generator{
		p:       p,
		answer:  a,
		stopSeq: stopSeq,
		d:       d,
		rng:     rand.New(rand.NewPCG(p.Seed, 0x747269636b6c65)),
	}, nil
}

// cutAtStop cuts text before the earliest of the stop sequences.
func cutAtStop(text string, stop []string) (string, string, bool) {
	at, seq := -1, ""
	for _, s := range stop {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at, seq = i, s
		}
	}
	if at < 0 {
		return text, "", false
	}
	return text[:at], seq, true
}

// Answer is the canned answer being streamed (after the request's tools
// and stop sequences shaped it).
func (g *Generator) Answer() Answer { return g.answer }

// Failed reports whether the generation ended with an injected error.
func (g *Generator) Failed() bool { return g.failed }

// Tokens is the number of content tokens streamed so far.
func (g *Generator) Tokens() int { return g.tokens }

// Next returns the next event, or false when the generation is over.
func (g *Generator) Next() (Message, bool) {
	for len(g.queue) == 0 {
		if g.done {
			return Message{}, false
		}
		g.fill()
	}
	m := g.queue[0]
	g.queue = g.queue[1:]
	g.emitted++
	if g.p.StallAfter > 0 && g.emitted == g.p.StallAfter+1 {
		m.Delay += g.p.Stall
	}
	if g.p.ErrorAfter > 0 && g.emitted == g.p.ErrorAfter && (len(g.queue) > 0 || !g.done) {
		// The error replaces everything that was still to come.
		g.queue = g.queue[:0]
		g.failed, g.done = true, true
		fail := g.d.failure(g, "simulated upstream failure after "+fmt.Sprint(g.p.ErrorAfter)+" events")
		g.queue = append(g.queue, fail...)
	}
	return m, true
}

// delay is the wait before the next token: ttft for the first, then the gap,
// each varied by the seeded jitter.
func (g *Generator) delay() time.Duration {
	base := g.p.Gap
	if !g.started {
		base, g.started = g.p.TTFT, true
	}
	if j := g.p.Jitter; j > 0 {
		base += time.Duration(g.rng.Int64N(int64(2*j)+1)) - j
	}
	return max(base, 0)
}

// nextToken cuts the next token (TokenChars runes) off g.rest.
func (g *Generator) nextToken() string {
	n, i := 0, 0
	for i < len(g.rest) && n < g.p.TokenChars {
		_, size := utf8.DecodeRuneInString(g.rest[i:])
		i += size
		n++
	}
	tok := g.rest[:i]
	g.rest = g.rest[i:]
	return tok
}

func (g *Generator) capped() bool { return g.p.MaxTokens > 0 && g.tokens >= g.p.MaxTokens }

// fill appends the events of the next step to the queue.
func (g *Generator) fill() {
	switch g.phase {
	case phaseStart:
		g.queue = append(g.queue, g.d.start(g)...)
		g.phase, g.rest = phaseThinking, g.answer.Thinking
	case phaseThinking, phaseText, phaseTool:
		kind := g.phase
		if g.rest == "" || g.capped() {
			if g.acc != nil {
				g.queue = append(g.queue, g.d.end(g, kind)...)
			}
			g.acc = nil
			if g.capped() {
				g.truncated = g.rest != "" || kind < phaseText && g.answer.Text != "" || kind < phaseTool && g.answer.Tool != nil
				g.phase = phaseFinish
				return
			}
			g.phase++
			switch g.phase {
			case phaseText:
				g.rest = g.answer.Text
			case phaseTool:
				if g.answer.Tool != nil {
					g.rest = g.answer.Tool.Arguments
				}
			}
			return
		}
		var msgs []Message
		first := g.acc == nil
		if first {
			g.acc = []byte{}
			msgs = g.d.begin(g, kind)
		}
		tok := g.nextToken()
		g.tokens++
		g.acc = append(g.acc, tok...)
		g.streamed[kind-phaseThinking] = append(g.streamed[kind-phaseThinking], tok...)
		deltas := g.d.delta(g, kind, tok, first)
		for i := range deltas {
			deltas[i].Token = true
		}
		msgs = append(msgs, deltas...)
		// A dialect may send nothing for a token (Gemini and Ollama send a
		// function call whole): its time still passes.
		g.carry += g.delay()
		if len(msgs) > 0 {
			msgs[0].Delay, g.carry = g.carry, 0
		}
		g.queue = append(g.queue, msgs...)
	case phaseFinish:
		reason := "stop"
		switch {
		case g.truncated:
			reason = "length"
		case g.answer.Tool != nil:
			reason = "tool_calls"
		}
		g.reason = reason
		msgs := g.d.finish(g, reason)
		if !g.p.NoEnd {
			msgs = append(msgs, g.d.endMarker(g)...)
		}
		if !g.started {
			g.carry += g.delay()
		}
		if len(msgs) > 0 {
			msgs[0].Delay, g.carry = g.carry, 0
		}
		g.queue = append(g.queue, msgs...)
		g.phase, g.done = phaseDone, true
	default:
		g.done = true
	}
}

// Whole is the generation as one completion (a request that does not
// stream): what it streams, with MaxTokens and the stop sequences
// applied, drained at once.
type Whole struct {
	Thinking, Text string
	Tool           *ToolCall // with the arguments streamed; nil when none
	FinishReason   string    // stop, length or tool_calls
	Tokens         int
}

// Drain runs the generation to its end, ignoring delays and faults'
// events, and returns it whole.
func (g *Generator) Drain() Whole {
	for {
		if _, ok := g.Next(); !ok {
			break
		}
	}
	w := Whole{Thinking: string(g.streamed[0]), Text: string(g.streamed[1]), FinishReason: g.reason, Tokens: g.tokens}
	if t := g.answer.Tool; t != nil && len(g.streamed[2]) > 0 {
		w.Tool = &ToolCall{ID: t.ID, Name: t.Name, Arguments: string(g.streamed[2])}
	}
	return w
}

// Failure returns the events a dialect uses to report a failure mid-answer:
// its error shape, followed by its end marker when the dialect has one that
// is compatible with an error. The relay uses it when a real upstream
// fails.
func Failure(dialectName stream.Dialect, message string) []Message {
	d, ok := dialects[dialectName]
	if !ok {
		d = dialects[stream.DialectOpenAI]
	}
	g := &Generator{p: Params{Dialect: dialectName, Model: "trickle-relay", ID: "relay"}}
	return d.failure(g, message)
}
