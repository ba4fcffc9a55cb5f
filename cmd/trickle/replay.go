package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/element"
)

var replayUsage = `Usage: trickle replay [--chunk N] [--sse] [--dialect NAME] [--frames] [--pace TOKENS_PER_SECOND] [--announce MODE] FILE|-

Runs a recorded stream (SSE or NDJSON, any dialect; a FILE ending in .txt
is a text/plain body, the text dialect) through the widget's
own Session (stream, render, a11y: the loop the widget runs in the browser),
one frame per 60 Hz animation frame as the widget does, and prints, as
JSON, what a person would see and hear: the answer's dialect, status,
text, thinking, tool calls, finish reason, usage, error, the rendered
html and the screen-reader announcements.

  --chunk N       feed the input in N-byte pieces (the result must not change)
  --sse           print the raw SSE events instead, one JSON object per line
  --dialect NAME  ` + dialectHelp + `
  --frames        also print every frame: the settled HTML appended, the live tail
  --pace N        tokens per second on the simulated clock (default 2400: 40
                  tokens per 60 Hz frame); times are simulated, nothing sleeps
  --announce M    sentences (default), complete or off
`

// replayOutput is the JSON replay prints without --sse.
type replayOutput struct {
	Dialect      stream.Dialect    `json:"dialect"`
	Status       string            `json:"status"`
	Text         string            `json:"text"`
	Thinking     string            `json:"thinking"`
	ToolCalls    []replayTool      `json:"tool_calls"`
	Sources      []stream.Source   `json:"sources,omitempty"`
	Citations    []stream.Citation `json:"citations,omitempty"`
	Files        []stream.File     `json:"files,omitempty"`
	Approvals    []stream.Approval `json:"approvals,omitempty"`
	FinishReason string            `json:"finish_reason"`
	Usage        *stream.Usage     `json:"usage"`
	Error        *replayError      `json:"error"`
	LastEventID  string            `json:"last_event_id"`
	Events       int               `json:"events"`
	Skipped      int               `json:"skipped"`
	Problems     []string          `json:"problems"`
	extra        []replayAddendum  // fields added by render/a11y, in order
}

type replayTool struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Complete  bool   `json:"complete"`
	// Output and OutputError: what the tool gave, when the backend ran it
	// and sent it (the ai-sdk and ag-ui dialects); Denied: the reader
	// denied it.
	Output      string `json:"output,omitempty"`
	OutputError string `json:"output_error,omitempty"`
	Denied      bool   `json:"denied,omitempty"`
}

type replayError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// replayAddendum is one extra top-level field (html, frames, announcements).
type replayAddendum struct {
	key   string
	value any
}

// MarshalJSON writes the fixed fields, then the addenda, keeping the
// documented key order.
func (o replayOutput) MarshalJSON() ([]byte, error) {
	type plain replayOutput
	base, err := marshalNoEscape(plain(o))
	if err != nil || len(o.extra) == 0 {
		return base, err
	}
	var b strings.Builder
	b.Write(base[:len(base)-1])
	for _, a := range o.extra {
		k, _ := marshalNoEscape(a.key)
		v, err := marshalNoEscape(a.value)
		if err != nil {
			return nil, err
		}
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// marshalNoEscape is json.Marshal without HTML escaping (the output is for
// people and tools, not for embedding in a page) and without the newline.
func marshalNoEscape(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (trickle replay FILE --chunk 7).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func replay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage) }
	chunk := fs.Int("chunk", 0, "feed the input in N-byte pieces")
	rawSSE := fs.Bool("sse", false, "print the raw SSE events")
	var dialect dialectFlag
	fs.Var(&dialect, "dialect", "the stream's dialect")
	frames := fs.Bool("frames", false, "print every frame")
	pace := fs.Float64("pace", defaultPace, "tokens per second on the simulated clock")
	announce := fs.String("announce", string(a11y.ModeSentences), "announcement mode: sentences, complete or off")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, "trickle replay: want exactly one FILE (or - for standard input)\n\n"+replayUsage)
		return 2
	}
	if *chunk < 0 {
		fmt.Fprintf(stderr, "trickle replay: --chunk must be positive, not %d\n", *chunk)
		return 2
	}
	if !(*pace > 0) || math.IsInf(*pace, 0) {
		fmt.Fprintf(stderr, "trickle replay: --pace must be a positive number of tokens per second, not %v\n", *pace)
		return 2
	}
	mode, err := a11y.ParseMode(*announce)
	if err != nil {
		fmt.Fprintf(stderr, "trickle replay: --announce must be sentences, complete or off, not %q\n", *announce)
		return 2
	}

	in := stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "trickle replay: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if *rawSSE {
		err = replaySSE(in, *chunk, out)
	} else {
		var o replayOutput
		o, err = replayAnswer(in, replayOptions{chunk: *chunk, dialect: stream.Dialect(dialect), contentType: contentTypeOf(pos[0]), frames: *frames, pace: *pace, announce: mode})
		if err == nil {
			err = writeIndented(out, o)
		}
	}
	if err != nil {
		out.Flush()
		fmt.Fprintf(stderr, "trickle replay: %v\n", err)
		return 1
	}
	return 0
}

// contentTypeOf is the content type a recording's file name tells: a .txt
// file is a text body as a server sends it with text/plain.
func contentTypeOf(file string) string {
	if strings.HasSuffix(file, ".txt") {
		return "text/plain; charset=utf-8"
	}
	return ""
}

// writeIndented prints v as indented JSON without HTML escaping: the
// output is for people and tools, and the text is full of < and &.
func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// pieces reads r and calls write with each piece: exactly n bytes each
// (the last may be shorter) when n > 0, else whatever each read returns.
func pieces(r io.Reader, n int, write func([]byte) error) error {
	size := n
	if size <= 0 {
		size = 32 << 10
	}
	buf := make([]byte, size)
	for {
		var m int
		var err error
		if n > 0 {
			m, err = io.ReadFull(r, buf)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
		} else {
			m, err = r.Read(buf)
		}
		if m > 0 {
			if werr := write(buf[:m]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the input: %w", err)
		}
	}
}

// replayOptions are replay's flags.
type replayOptions struct {
	chunk       int
	dialect     stream.Dialect
	contentType string // the recording's, when its name tells
	frames      bool
	pace        float64
	announce    a11y.Mode
}

// replayAnswer runs the input through the widget's Session on a simulated
// clock. The bytes are fed in --chunk pieces, each further cut at line
// ends so that tokens get their own arrival times whatever the chunking.
func replayAnswer(in io.Reader, o replayOptions) (replayOutput, error) {
	if o.pace <= 0 {
		o.pace = defaultPace
	}
	s, err := newSimulation(element.Config{Dialect: o.dialect, ContentType: o.contentType, Announce: o.announce}, o.pace)
	if err != nil {
		// The flags were checked as they were read (dialectFlag, --announce).
		return replayOutput{}, err
	}
	write := func(b []byte) { splitLines(b, s.feed) }
	var line []byte
	if o.contentType != "" || o.dialect == stream.DialectText {
		// A text body has no events: each piece it is fed in is a token.
		// Fed a whole line at a time, its tokens do not depend on --chunk.
		write = func(b []byte) {
			for len(b) > 0 {
				i := bytes.IndexByte(b, '\n')
				if i < 0 {
					line = append(line, b...)
					return
				}
				line = append(line, b[:i+1]...)
				s.feed(line)
				line, b = line[:0], b[i+1:]
			}
		}
	}
	err = pieces(in, o.chunk, func(b []byte) error {
		write(b)
		return nil
	})
	if err != nil {
		return replayOutput{}, err
	}
	if len(line) > 0 {
		s.feed(line)
	}
	s.finish()
	out := answerOutput(s.sess)
	anns := s.anns
	if anns == nil {
		anns = []replayAnnouncement{}
	}
	out.extra = []replayAddendum{{"html", s.html.String()}, {"announcements", anns}}
	if o.frames {
		out.extra = append(out.extra, replayAddendum{"frames", s.frames})
	}
	return out, nil
}

// answerOutput describes the session's answer.
func answerOutput(s *element.Session) replayOutput {
	a := s.Answer()
	o := replayOutput{
		Dialect: s.Dialect(), Status: a.Status().String(), Text: a.Text(), Thinking: a.Thinking(),
		ToolCalls: []replayTool{}, Sources: a.Sources(), Citations: a.Citations(), Files: a.Files(), Approvals: a.Approvals(),
		FinishReason: a.FinishReason(), Usage: a.Usage(),
		Error: describeError(a.Err()), LastEventID: s.LastEventID(),
		Events: a.Events(), Skipped: a.Skipped(), Problems: []string{},
	}
	for _, c := range a.ToolCalls() {
		o.ToolCalls = append(o.ToolCalls, replayTool{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Complete: c.Complete, Output: c.Output, OutputError: c.OutputError, Denied: c.Denied})
	}
	for _, e := range a.Problems() {
		o.Problems = append(o.Problems, e.Error())
	}
	return o
}

// describeError gives an answer's error a type word and a message.
func describeError(err error) *replayError {
	if err == nil {
		return nil
	}
	var perr *stream.ProviderError
	var rerr *stream.RelayError
	switch {
	case errors.As(err, &perr):
		return &replayError{Type: perr.Type, Message: perr.Message}
	case errors.As(err, &rerr):
		return &replayError{Type: "relay_" + rerr.Status, Message: err.Error()}
	case errors.Is(err, stream.ErrIncomplete):
		return &replayError{Type: "incomplete", Message: err.Error()}
	case errors.Is(err, stream.ErrStopped):
		return &replayError{Type: "stopped", Message: err.Error()}
	}
	return &replayError{Type: "error", Message: err.Error()}
}

// sseLines writes one JSON line per decoded SSE event or retry field.
type sseLines struct {
	w   io.Writer
	err error
}

func (s *sseLines) line(v any) {
	if s.err != nil {
		return
	}
	b, err := marshalNoEscape(v)
	if err == nil {
		b = append(b, '\n')
		_, err = s.w.Write(b)
	}
	s.err = err
}

func (s *sseLines) Event(e sse.Event) {
	s.line(struct {
		Type        string `json:"type"`
		Data        string `json:"data"`
		LastEventID string `json:"lastEventId"`
	}{e.Type, e.Data, e.LastEventID})
}

func (s *sseLines) Retry(ms int) {
	s.line(struct {
		Retry int `json:"retry"`
	}{ms})
}

// replaySSE prints the raw events exactly as an EventSource would see
// them.
func replaySSE(in io.Reader, chunk int, w io.Writer) error {
	out := &sseLines{w: w}
	p, err := sse.NewParser(out)
	if err != nil {
		return err
	}
	err = pieces(in, chunk, func(b []byte) error {
		// Line by line, like the pipeline: the parser reports one dropped
		// event per Write, so each drop is printed where it happened.
		splitLines(b, func(line []byte) {
			if _, err := p.Write(line); err != nil {
				out.line(struct {
					Error string `json:"error"`
				}{fmt.Sprintf("event dropped: larger than %d bytes (%v)", sse.DefaultMaxEventSize, sse.ErrEventTooLarge)})
			}
		})
		return out.err
	})
	if err != nil {
		return err
	}
	closeErr := p.Close()
	eof := struct {
		EOF         bool   `json:"eof"`
		LastEventID string `json:"lastEventId"`
		Incomplete  string `json:"incomplete,omitempty"`
	}{EOF: true, LastEventID: p.LastEventID()}
	if closeErr != nil {
		eof.Incomplete = closeErr.Error()
	}
	out.line(eof)
	return out.err
}
