// Package upstream is the relay's client of a real model API (OpenAI
// compatible, Anthropic, Ollama): the request in the upstream's dialect,
// the retries before the first byte, the first-token, idle and total
// timeouts, and the events relayed as they come. It never keeps a log:
// the relay gives it where to emit.
package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// Upstream errors, wrapped with where and when they happened.
var (
	ErrUpstream          = errors.New("relay: upstream failed")
	ErrFirstTokenTimeout = errors.New("relay: upstream sent nothing within the first-token timeout")
	ErrIdleTimeout       = errors.New("relay: upstream went silent past the idle timeout")
	ErrTotalTimeout      = errors.New("relay: upstream answer exceeded the total timeout")
	// ErrReported: the upstream sent its own error event, which the
	// relay logs and never relays (it may quote the upstream's internals).
	ErrReported    = fmt.Errorf("%w: the upstream reported an error", ErrUpstream)
	ErrNoEndMarker = errors.New("relay: upstream closed without its end marker")
)

// StatusError is an upstream answer other than 200 OK. Its Error names
// the URL and quotes the body: it is for the relay's log, never for a
// client (Public is).
type StatusError struct {
	URL    string
	Code   int
	Status string // "401 Unauthorized"
	Body   string // the first 4 KiB
	// Location is a redirect's target (a 3xx), which the relay never
	// follows: following it would send the key and the prompt to wherever
	// the upstream points.
	Location string
}

func (e *StatusError) Error() string {
	if e.Location != "" {
		return fmt.Sprintf("%v: %s answered %s to %s, a redirect the relay does not follow (the key goes only to the configured upstream)", ErrUpstream, e.URL, e.Status, e.Location)
	}
	return fmt.Sprintf("%v: %s answered %s: %s", ErrUpstream, e.URL, e.Status, e.Body)
}

// Unwrap makes errors.Is(err, ErrUpstream) true.
func (e *StatusError) Unwrap() error { return ErrUpstream }

// statusError is the StatusError for resp, its first 4 KiB of body read.
func statusError(url string, resp *http.Response) *StatusError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	se := &StatusError{URL: url, Code: resp.StatusCode, Status: resp.Status, Body: strings.TrimSpace(string(b))}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		se.Location = resp.Header.Get("Location")
	}
	return se
}

// noRedirects is every upstream client's redirect policy: the 3xx itself
// is the answer (a failure), so neither the key — Authorization,
// x-api-key, x-goog-api-key, whatever the dialect sends, which Go would
// forward to the same host on another port, and forward in part to
// another host — nor the prompt (a 307 resends the body) leaves for a
// host the operator did not configure.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Public says what went wrong with an upstream request in words a client
// may read: which kind of failure, never the upstream's URL, its body or
// the Go error chain (those go to the relay's log).
func Public(err error) string {
	var se *StatusError
	switch {
	case errors.As(err, &se):
		switch {
		case se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden:
			return fmt.Sprintf("the model's service refused the relay's credentials (%d); the operator must check the relay's key", se.Code)
		case se.Code == http.StatusTooManyRequests:
			return "the model's service is over its rate limit (429); try again shortly"
		case se.Code >= 300 && se.Code <= 399:
			return fmt.Sprintf("the model's service answered with a redirect (%d), which the relay does not follow; the operator must check the upstream URL", se.Code)
		case se.Code >= 500:
			return fmt.Sprintf("the model's service failed (%d); try again shortly", se.Code)
		default:
			return fmt.Sprintf("the model's service refused the request (%d)", se.Code)
		}
	case errors.Is(err, ErrNotCompletion):
		return "the model's service answered with something that is not a completion"
	case errors.Is(err, ErrReported):
		return "the model's service reported an error"
	case errors.Is(err, ErrFirstTokenTimeout):
		return "the model's service sent nothing within the first-token timeout"
	case errors.Is(err, ErrIdleTimeout):
		return "the model's service went silent past the idle timeout"
	case errors.Is(err, ErrTotalTimeout):
		return "the model's answer exceeded the total timeout"
	case errors.Is(err, ErrNoEndMarker):
		return "the model's service closed the answer without its end marker"
	case errors.Is(err, chat.ErrBadRequest):
		return err.Error()
	}
	return "the relay could not reach the model's service, or it broke off the answer"
}

// Upstream is a real model API the relay forwards requests to instead of
// using the simulated model.
type Upstream struct {
	// URL is the full endpoint, e.g. https://host/v1/chat/completions,
	// https://host/v1/messages or http://127.0.0.1:11434/api/chat.
	URL string
	// Dialect is the upstream's API: one of Dialects.
	Dialect stream.Dialect
	// Key is sent to the upstream only (never to clients).
	Key string
	// Model replaces the request's model when not empty.
	Model string
	// FirstTokenTimeout, IdleTimeout and TotalTimeout bound the wait for
	// the first byte of the answer, between two reads, and overall; zero
	// takes the one in DefaultSettings().Upstream.
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration
	TotalTimeout      time.Duration
	// Retries is how many times a request that failed before its first
	// byte is tried again (never after: the answer would be doubled); zero
	// never retries (trickle serve's flag takes
	// DefaultSettings().Upstream.Retries).
	Retries int
	// Client makes the requests; nil means a client with sane timeouts.
	Client *http.Client
}

// dialects are the APIs an Upstream can call: those it can write a
// request for.
var dialects = []stream.Dialect{stream.DialectOpenAI, stream.DialectAnthropic, stream.DialectOllama}

// Dialects lists the dialects an Upstream can call (of stream.Dialects).
func Dialects() []stream.Dialect { return slices.Clone(dialects) }

// FieldError names the field of an Upstream that cannot work.
type FieldError struct {
	Field  string
	Value  any
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s %v: %s", e.Field, e.Value, e.Reason) }

// Defaults are the timeouts an Upstream left at zero takes.
type Defaults struct {
	FirstTokenTimeout, IdleTimeout, TotalTimeout time.Duration
}

// Where is the upstream's URL as the relay's log and errors show it:
// scheme, host and path, without userinfo or query, where a key may sit
// (Google-style ?key=, https://user:key@host).
func (u *Upstream) Where() string {
	pu, err := url.Parse(u.URL)
	if err != nil {
		return "(the upstream URL)"
	}
	return (&url.URL{Scheme: pu.Scheme, Host: pu.Host, Path: pu.Path}).String()
}

// bare is a client error without the *url.Error around it, which spells
// the request's whole URL, query and all.
func bare(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// Check refuses an Upstream that cannot work and fills in the defaults
// and the client.
func (u *Upstream) Check(d Defaults) error {
	pu, err := url.Parse(u.URL)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return &FieldError{Field: "URL", Value: fmt.Sprintf("%q", u.URL), Reason: "not an absolute http(s) URL"}
	}
	if !slices.Contains(dialects, u.Dialect) {
		return &FieldError{Field: "Dialect", Value: fmt.Sprintf("%q", u.Dialect), Reason: "want one of " + stream.DialectNames(dialects)}
	}
	for _, t := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"FirstTokenTimeout", &u.FirstTokenTimeout, d.FirstTokenTimeout}, {"IdleTimeout", &u.IdleTimeout, d.IdleTimeout}, {"TotalTimeout", &u.TotalTimeout, d.TotalTimeout}} {
		switch {
		case *t.v < 0:
			return &FieldError{Field: t.name, Value: *t.v, Reason: "negative (zero takes the default, " + t.def.String() + ")"}
		case *t.v == 0:
			*t.v = t.def
		}
	}
	if u.Retries < 0 {
		return &FieldError{Field: "Retries", Value: u.Retries, Reason: "negative"}
	}
	if u.Client != nil {
		// A client of the embedder's keeps its transport and timeouts,
		// never its redirect policy.
		c := *u.Client
		c.CheckRedirect = noRedirects
		u.Client = &c
	}
	if u.Client == nil {
		u.Client = &http.Client{CheckRedirect: noRedirects, Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			DisableCompression:    true, // compressed SSE arrives in bursts
			ResponseHeaderTimeout: 0,    // the first-token timeout covers it
		}}
	}
	return nil
}

// ErrNoModel means neither the request nor the relay names the model to
// ask upstream.
var ErrNoModel = errors.New("the request names no model and the relay has no upstream model")

// Body turns the client's OpenAI request, read (req) from its members (as
// admit.Decode returns them, filtered), into the upstream's. The model is
// u.Model when set, else the request's; a request without one, to a relay
// without one, is refused (wrapping chat.ErrBadRequest and ErrNoModel):
// the widget sends a model only when the page names one.
func (u *Upstream) Body(req *chat.Request, members map[string]json.RawMessage, streaming bool) ([]byte, error) {
	model := req.Model
	if u.Model != "" {
		model = u.Model
	}
	if model == "" {
		return nil, fmt.Errorf("%w: %w: start the relay with --upstream-model NAME (Upstream.Model), or send \"model\" in the request (the element's model attribute)", chat.ErrBadRequest, ErrNoModel)
	}
	switch u.Dialect {
	case stream.DialectOpenAI:
		// The client's members as they came (the body is not decoded
		// again), the model and streaming set.
		m := maps.Clone(members)
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		m["model"], _ = json.Marshal(model)
		m["stream"] = json.RawMessage(strconv.FormatBool(streaming))
		if streaming {
			m["stream_options"] = json.RawMessage(`{"include_usage":true}`)
		} else {
			delete(m, "stream_options")
		}
		return json.Marshal(m)
	case stream.DialectAnthropic:
		return anthropicBody(req, model, streaming)
	default: // ollama
		return ollamaBody(req, model, streaming)
	}
}

// args is a tool call's arguments as the object Anthropic and Ollama take
// (an empty one when they are not a JSON object).
func args(raw string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(raw)
}

// schema is a tool's parameters, an object schema when it gave none.
func schema(p json.RawMessage) json.RawMessage {
	if len(p) == 0 || string(p) == "null" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return p
}

// anthropicBody is the request in Anthropic's Messages API: system apart,
// the conversation as content blocks (an assistant's tool calls as
// tool_use, tool messages as tool_result blocks of a user message; a
// message of the same role as the one before joins it), tools with
// input_schema, tool_choice and stop_sequences.
func anthropicBody(req *chat.Request, model string, streaming bool) ([]byte, error) {
	type block map[string]any
	type msg struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	out := struct {
		Model         string         `json:"model"`
		MaxTokens     int            `json:"max_tokens"`
		System        string         `json:"system,omitempty"`
		Messages      []msg          `json:"messages"`
		Tools         []tool         `json:"tools,omitempty"`
		ToolChoice    map[string]any `json:"tool_choice,omitempty"`
		StopSequences []string       `json:"stop_sequences,omitempty"`
		Stream        bool           `json:"stream"`
	}{Model: model, MaxTokens: 4096, Stream: streaming, StopSequences: req.StopSequences()}
	if req.MaxTokens != nil {
		out.MaxTokens = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil {
		out.MaxTokens = *req.MaxCompletionTokens
	}
	add := func(role string, blocks ...block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
			return
		}
		out.Messages = append(out.Messages, msg{Role: role, Content: blocks})
	}
	var system []string
	for _, m := range req.Messages {
		text := m.Text()
		var blocks []block
		if text != "" {
			blocks = append(blocks, block{"type": "text", "text": text})
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "assistant":
			for _, c := range m.ToolCalls {
				blocks = append(blocks, block{"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": args(c.Function.Arguments)})
			}
			add("assistant", blocks...)
		case "tool":
			add("user", block{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": text})
		default:
			add("user", blocks...)
		}
	}
	out.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: schema(t.Function.Parameters)})
	}
	switch c := req.ToolChoiceName(); c {
	case "":
	case "auto", "none":
		out.ToolChoice = map[string]any{"type": c}
	case "required":
		out.ToolChoice = map[string]any{"type": "any"}
	default:
		out.ToolChoice = map[string]any{"type": "tool", "name": c}
	}
	if len(out.Tools) == 0 {
		out.ToolChoice = nil
	}
	return json.Marshal(out)
}

// ollamaBody is the request in Ollama's /api/chat: the messages with an
// assistant's tool calls (arguments as an object) and tool messages named
// by their tool, the tools as OpenAI declares them, the stop sequences in
// options.
func ollamaBody(req *chat.Request, model string, streaming bool) ([]byte, error) {
	type call struct {
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	type msg struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []call `json:"tool_calls,omitempty"`
		ToolName  string `json:"tool_name,omitempty"`
	}
	out := struct {
		Model    string          `json:"model"`
		Messages []msg           `json:"messages"`
		Tools    []chat.ToolDecl `json:"tools,omitempty"`
		Options  map[string]any  `json:"options,omitempty"`
		Stream   bool            `json:"stream"`
	}{Model: model, Stream: streaming, Tools: req.Tools}
	names := map[string]string{} // call id -> tool name
	for _, m := range req.Messages {
		o := msg{Role: m.Role, Content: m.Text()}
		for _, c := range m.ToolCalls {
			var oc call
			oc.Function.Name, oc.Function.Arguments = c.Function.Name, args(c.Function.Arguments)
			o.ToolCalls = append(o.ToolCalls, oc)
			names[c.ID] = c.Function.Name
		}
		if m.Role == "tool" {
			o.ToolName = m.Name
			if o.ToolName == "" {
				o.ToolName = names[m.ToolCallID]
			}
		}
		out.Messages = append(out.Messages, o)
	}
	if stop := req.StopSequences(); len(stop) > 0 {
		out.Options = map[string]any{"stop": stop}
	}
	// The output cap (the client's, or the relay's --max-tokens that
	// admission wrote in) is Ollama's num_predict: without it Ollama
	// generates until the model stops.
	limit := req.MaxTokens
	if req.MaxCompletionTokens != nil {
		limit = req.MaxCompletionTokens
	}
	if limit != nil {
		if out.Options == nil {
			out.Options = map[string]any{}
		}
		out.Options["num_predict"] = *limit
	}
	return json.Marshal(out)
}

func (u *Upstream) newRequest(ctx context.Context, payload []byte) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream, application/x-ndjson, application/json")
	if u.Key != "" {
		switch u.Dialect {
		case stream.DialectAnthropic:
			hr.Header.Set("x-api-key", u.Key)
		default:
			hr.Header.Set("Authorization", "Bearer "+u.Key)
		}
	}
	if u.Dialect == stream.DialectAnthropic {
		hr.Header.Set("anthropic-version", "2023-06-01")
	}
	return hr, nil
}

// Run makes the upstream request (retrying only while nothing has been
// received: onRetry hears of each failed attempt), relays every event to
// emit until it returns false, and returns the number of events relayed
// and nil when the dialect's end marker came, else why not.
func (u *Upstream) Run(ctx context.Context, id string, payload []byte, maxEvent int, emit func(event, data string) bool, onRetry func(attempt int, err error)) (int, error) {
	ctx, cancelTotal := context.WithTimeoutCause(ctx, u.TotalTimeout, ErrTotalTimeout)
	defer cancelTotal()
	var err error
	var relayed int
	for attempt := 0; attempt <= u.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt*attempt) * 250 * time.Millisecond):
			case <-ctx.Done():
			}
		}
		var retry bool
		relayed, retry, err = u.attempt(ctx, id, payload, maxEvent, emit)
		if err == nil || !retry || ctx.Err() != nil || attempt == u.Retries {
			break // onRetry hears only of attempts that are tried again
		}
		onRetry(attempt+1, err)
	}
	if err != nil {
		if c := context.Cause(ctx); c != nil && !errors.Is(err, c) && errors.Is(c, ErrTotalTimeout) {
			err = c
		}
	}
	return relayed, err
}

// Forward sends a stream:false request and, when the upstream's answer is
// a completion of its dialect, writes it to w and returns the output
// tokens it reports. The answer is read whole first, under the same
// watchdogs as a stream (first byte, idle, total) and at most
// maxForwardBody bytes, so a silent, slow, cut or foreign answer is an
// error and nothing is written: the relay answers 502 in its own words,
// never 200 with an empty or cut body, nor an upstream's HTML page. The
// error is the request's failure, a *StatusError for an answer other than
// 2xx, ErrNotCompletion for a body of no completion's shape, or a
// watchdog's error.
func (u *Upstream) Forward(ctx context.Context, w http.ResponseWriter, payload []byte) (int, error) {
	ctx, cancelTotal := context.WithTimeoutCause(ctx, u.TotalTimeout, ErrTotalTimeout)
	defer cancelTotal()
	ctx, dog, gotByte, stop := u.watchdog(ctx)
	defer stop()
	cause := func(err error) error {
		if c := context.Cause(ctx); c != nil && ctx.Err() != nil && !errors.Is(err, c) {
			return fmt.Errorf("%w (%w)", c, err)
		}
		return err
	}
	hr, err := u.newRequest(ctx, payload)
	if err != nil {
		return 0, err
	}
	resp, err := u.Client.Do(hr)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %s: %w", ErrUpstream, hr.Method, u.Where(), cause(bare(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The upstream's error body names its own internals (its host,
		// the key's name): the client gets Public's words instead.
		return 0, statusError(u.Where(), resp)
	}
	var body bytes.Buffer
	n, err := body.ReadFrom(io.LimitReader(&idleReader{r: resp.Body, dog: dog, idle: u.IdleTimeout, got: gotByte}, maxForwardBody+1))
	if err != nil {
		return 0, fmt.Errorf("%w: reading %s after %d bytes: %w", ErrUpstream, u.Where(), n, cause(err))
	}
	if n > maxForwardBody {
		return 0, fmt.Errorf("%w: %s answered over %d bytes", ErrNotCompletion, u.Where(), maxForwardBody)
	}
	if why := completionShape(u.Dialect, body.Bytes()); why != "" {
		return 0, fmt.Errorf("%w: %s answered %s (%s)", ErrNotCompletion, u.Where(), why, resp.Header.Get("Content-Type"))
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.Contains(ct, "json") {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(resp.StatusCode)
	w.Write(body.Bytes())
	return outputTokens(body.Bytes()), nil
}

// maxForwardBody bounds a non-streamed answer the relay reads before
// writing it on.
const maxForwardBody = 8 << 20

// ErrNotCompletion: a non-streamed answer that is not a completion of the
// upstream's dialect (an HTML page, a truncated or foreign JSON body).
var ErrNotCompletion = fmt.Errorf("%w: not a completion", ErrUpstream)

// completionShape says why body is not a non-streamed completion of
// dialect d ("" when it is one): a JSON object with the field every such
// answer has — OpenAI's choices, Anthropic's content, Ollama's message.
func completionShape(d stream.Dialect, body []byte) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return "a body that is not a JSON object"
	}
	want := map[stream.Dialect]string{stream.DialectOpenAI: "choices", stream.DialectAnthropic: "content", stream.DialectOllama: "message"}[d]
	if _, ok := obj[want]; want != "" && !ok {
		return "JSON without " + strconv.Quote(want)
	}
	return ""
}

// idleReader resets the watchdog as bytes arrive: the first byte turns
// the first-token wait into the idle wait.
type idleReader struct {
	r    io.Reader
	dog  *time.Timer
	idle time.Duration
	got  *atomic.Bool
}

func (b *idleReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.got.Store(true)
		b.dog.Reset(b.idle)
	}
	return n, err
}

// capped keeps the first n bytes written to it.
type capped struct {
	b *bytes.Buffer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// watchdog is a request's first-token and idle watch: ctx is cancelled
// with ErrFirstTokenTimeout when no byte came within FirstTokenTimeout,
// with ErrIdleTimeout when the reads (which reset dog to IdleTimeout and
// set got) stop for that long; stop releases both.
func (u *Upstream) watchdog(parent context.Context) (ctx context.Context, dog *time.Timer, got *atomic.Bool, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	got = new(atomic.Bool)
	dog = time.AfterFunc(u.FirstTokenTimeout, func() {
		if got.Load() {
			cancel(ErrIdleTimeout)
		} else {
			cancel(ErrFirstTokenTimeout)
		}
	})
	return ctx, dog, got, func() { dog.Stop(); cancel(nil) }
}

// attempt makes one upstream request. retry reports whether the failure
// happened before the first byte of the answer (so trying again cannot
// double anything).
func (u *Upstream) attempt(parent context.Context, id string, payload []byte, maxEvent int, emit func(event, data string) bool) (relayed int, retry bool, err error) {
	ctx, dog, gotByte, stop := u.watchdog(parent)
	defer stop()
	cause := func(err error) error {
		if c := context.Cause(ctx); c != nil && ctx.Err() != nil {
			return fmt.Errorf("%w (stream %s, after %d events)", c, id, relayed)
		}
		return err
	}

	hr, err := u.newRequest(ctx, payload)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	resp, err := u.Client.Do(hr)
	if err != nil {
		return 0, true, fmt.Errorf("%w: %s %s: %w", ErrUpstream, hr.Method, u.Where(), cause(bare(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return 0, retry, statusError(u.Where(), resp)
	}

	// The dialect's decoder reads the same events to tell a complete
	// answer (its end marker) from a cut one; it keeps nothing of the
	// answer (the log holds it once).
	end, err := newEnding(u.Dialect)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	body := &watchedBody{r: resp.Body, dog: dog, idle: u.IdleTimeout, got: gotByte}
	// Only the relay's words reach a client: an upstream's own error event
	// (which may quote its internal URLs or echo the key) ends the read
	// and goes to the log, and the relay writes its own failure; an event
	// of the relay's own vocabulary (trickle.*) from an upstream is
	// dropped, never passed off as the relay's.
	var reported string
	count := func(event, data string) bool {
		if strings.HasPrefix(event, "trickle.") {
			return true
		}
		if raw, ok := upstreamError(u.Dialect, event, data); ok {
			reported = raw
			return false
		}
		relayed++
		end.see(event, data)
		return emit(event, data)
	}
	var readErr error
	if u.Dialect == stream.DialectOllama && !strings.Contains(resp.Header.Get("Content-Type"), "event-stream") {
		readErr = relayNDJSON(body, maxEvent, count)
	} else {
		readErr = relaySSE(body, maxEvent, count)
	}
	if reported != "" {
		return relayed, false, fmt.Errorf("%w: %s after %d events (not relayed): %s", ErrReported, u.Where(), relayed, reported)
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) {
		if !body.started {
			return relayed, true, fmt.Errorf("%w: reading %s: %w", ErrUpstream, u.Where(), cause(readErr))
		}
		return relayed, false, fmt.Errorf("%w: reading %s after %d events: %w", ErrUpstream, u.Where(), relayed, cause(readErr))
	}
	end.close()
	switch st := end.status; st {
	case stream.Complete:
		return relayed, false, nil
	case stream.Failed:
		// The upstream reported its own error in its own shape; it was
		// relayed as it came.
		return relayed, false, fmt.Errorf("%w: %s reported an error after %d events: %v", ErrUpstream, u.Where(), relayed, end.err)
	default:
		return relayed, !body.started, fmt.Errorf("%w: %s closed after %d events (%s)", ErrNoEndMarker, u.Where(), relayed, st)
	}
}

// upstreamError reports whether an upstream's event is its own error
// report (the dialect's decoder says KindError), and the event as the
// log shows it (at most 1 KiB). Only events that could be one are decoded
// a second time: an "error" event type or the word "error" in quotes.
func upstreamError(d stream.Dialect, event, data string) (string, bool) {
	if event != "error" && !strings.Contains(data, `"error"`) {
		return "", false
	}
	dec, err := stream.NewDecoder(d)
	if err != nil {
		return "", false
	}
	typ := event
	if typ == "" {
		typ = "message"
	}
	found := false
	_ = dec.Decode(sse.Event{Type: typ, Data: data}, func(e stream.Event) {
		found = found || e.Kind == stream.KindError
	})
	if !found {
		return "", false
	}
	raw := data
	if event != "" {
		raw = "event: " + event + " data: " + data
	}
	if len(raw) > 1024 {
		raw = raw[:1024] + "…"
	}
	return raw, true
}

// ending follows an upstream's events to its end, as the widget's
// pipeline would, with the dialect's decoder alone: whether the end
// marker came, or an error, and nothing of the answer itself.
type ending struct {
	dec    stream.Decoder
	status stream.Status // Waiting until the end marker (Complete), an error (Failed) or an abort (Stopped)
	err    error
}

func newEnding(d stream.Dialect) (*ending, error) {
	dec, err := stream.NewDecoder(d)
	if err != nil {
		return nil, err
	}
	return &ending{dec: dec}, nil
}

// see reads one event (an NDJSON line as a "message"); an event the
// decoder cannot read is skipped, as the pipeline skips it.
func (e *ending) see(event, data string) {
	if e.status.Terminal() {
		return
	}
	if event == "" {
		event = "message"
	}
	_ = e.dec.Decode(sse.Event{Type: event, Data: data}, e.apply)
}

// close is the clean end of the bytes (a dialect whose end is the close
// itself emits its end marker then); without an end the answer is
// Incomplete.
func (e *ending) close() {
	if !e.status.Terminal() {
		e.dec.Close(e.apply)
	}
	if !e.status.Terminal() {
		e.status = stream.Incomplete
	}
}

func (e *ending) apply(ev stream.Event) {
	if e.status.Terminal() {
		return
	}
	switch ev.Kind {
	case stream.KindEnd:
		e.status = stream.Complete
	case stream.KindAbort:
		e.status = stream.Stopped
	case stream.KindError:
		e.status, e.err = stream.Failed, ev.Err
		if e.err == nil {
			e.err = errors.New("unknown error")
		}
	}
}

// watchedBody feeds the idle watchdog as bytes arrive.
type watchedBody struct {
	r       io.Reader
	dog     *time.Timer
	idle    time.Duration
	got     *atomic.Bool
	started bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		if !b.started {
			b.started = true
			b.got.Store(true)
		}
		b.dog.Reset(b.idle)
	}
	return n, err
}

var errStopped = errors.New("relay: stream ended")

func relaySSE(r io.Reader, maxEvent int, emit func(event, data string) bool) error {
	dec, err := sse.NewDecoder(r, sse.WithMaxEventSize(maxEvent))
	if err != nil {
		return err
	}
	for {
		ev, err := dec.Next()
		if err != nil {
			return err
		}
		typ := ev.Type
		if typ == "message" {
			typ = ""
		}
		if !emit(typ, ev.Data) {
			return errStopped
		}
	}
}

func relayNDJSON(r io.Reader, maxEvent int, emit func(event, data string) bool) error {
	br := bufio.NewReaderSize(r, 16<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxEvent {
			return fmt.Errorf("relay: an NDJSON line is over %d bytes", maxEvent)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !emit("", string(t)) {
				return errStopped
			}
		}
		line = line[:0]
		if err != nil {
			return err
		}
	}
}
