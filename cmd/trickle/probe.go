package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/internal/buffering"
	"github.com/trickle-dev/trickle/stream"
)

var probeUsage = `Usage: trickle probe URL [-d BODY] [-H 'Name: value']... [--dialect NAME] [--timeout D]

Streams from URL (POST when -d is given, GET otherwise) through the same
pipeline as the widget and reports, as JSON: time to the response headers,
time to first byte (TTFB), time to first token (TTFT), the gaps between
tokens (p50, p95, max), tokens, bytes, whether the end marker came,
"buffering" (the widget's metric: "streamed", "buffered" or "unknown") and a
verdict in words: "streaming", "batched", "buffered" (first and last byte arrived
together — at least 51 tokens within 50 ms: something between the two ends
is holding the stream) or "inconclusive" (fewer than 2 tokens, or fewer
than 51 arriving within 50 ms, which a fast model can do on its own).

  -d BODY         request body; @FILE reads it from a file (implies POST and,
                  unless -H sets it, Content-Type: application/json)
  -H 'N: v'       request header, repeatable
  --dialect NAME  ` + dialectHelp + `
  --timeout D     give up after D (default 2m)
`

// headerFlags collects repeated -H values.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// probeReport is the JSON probe prints.
type probeReport struct {
	URL          string            `json:"url"`
	StatusCode   int               `json:"status_code"`
	ContentType  string            `json:"content_type"`
	Dialect      stream.Dialect    `json:"dialect"`
	HeadersMS    float64           `json:"headers_ms"`
	TTFBMS       *float64          `json:"ttfb_ms"`
	TTFTMS       *float64          `json:"ttft_ms"`
	LastByteMS   *float64          `json:"last_byte_ms"`
	SpreadMS     float64           `json:"first_to_last_byte_ms"`
	Gaps         gapStats          `json:"inter_token_ms"`
	Tokens       int               `json:"tokens"`
	Bytes        int64             `json:"bytes"`
	Reads        int               `json:"reads"`
	EndMarker    bool              `json:"end_marker"`
	AnswerStatus string            `json:"answer_status"`
	Error        *replayError      `json:"error"`
	Buffering    buffering.Verdict `json:"buffering"` // the widget's metric's verdict
	Verdict      string            `json:"verdict"`
	Explanation  string            `json:"explanation"`
	Usage        *stream.Usage     `json:"usage"`
}

// gapStats summarises the time between consecutive tokens.
type gapStats struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// burstTokensPerRead marks a stream that arrives over time but in large
// bursts (a proxy flushing every few kilobytes, gzip): many tokens per read.
const burstTokensPerRead = 12

func probe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, probeUsage) }
	body := fs.String("d", "", "request body (@FILE reads a file)")
	var headers headerFlags
	fs.Var(&headers, "H", "request header 'Name: value' (repeatable)")
	var dialect dialectFlag
	fs.Var(&dialect, "dialect", "the stream's dialect")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, "trickle probe: want exactly one URL\n\n"+probeUsage)
		return 2
	}
	payload := *body
	if strings.HasPrefix(payload, "@") {
		b, err := os.ReadFile(payload[1:])
		if err != nil {
			fmt.Fprintf(stderr, "trickle probe: -d: %v\n", err)
			return 2
		}
		payload = string(b)
	}
	hdr := http.Header{}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			fmt.Fprintf(stderr, "trickle probe: -H %q: want 'Name: value'\n", h)
			return 2
		}
		hdr.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	rep, err := runProbe(ctx, http.DefaultClient, pos[0], *body != "", payload, hdr, stream.Dialect(dialect))
	if rep != nil {
		if werr := writeIndented(stdout, rep); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "trickle probe: %v\n", err)
		return 1
	}
	return 0
}

// runProbe makes the request and times the body as it arrives. It returns
// a report whenever a response arrived, even with an error.
func runProbe(ctx context.Context, client *http.Client, url string, post bool, body string, hdr http.Header, dialect stream.Dialect) (*probeReport, error) {
	method := http.MethodGet
	var rd io.Reader
	if post {
		method, rd = http.MethodPost, strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("bad request: %w", err)
	}
	req.Header = hdr
	if post && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "text/event-stream, application/x-ndjson, */*")
	}

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	rep := &probeReport{
		URL: url, StatusCode: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		HeadersMS: ms(time.Since(start)),
	}

	var now time.Time
	var tokenTimes []time.Time
	p, err := stream.NewPipeline(
		stream.WithDialect(dialect),
		stream.WithContentType(rep.ContentType),
		stream.WithEventHandler(func(e stream.Event) {
			if (e.Kind == stream.KindText || e.Kind == stream.KindThinking) && e.Text != "" {
				tokenTimes = append(tokenTimes, now)
			}
			if e.Kind == stream.KindEnd {
				rep.EndMarker = true
			}
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("--dialect: %w", err) // the one option a flag sets
	}

	var first, last time.Time
	buf := make([]byte, 32<<10)
	var readErr error
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			now = time.Now()
			if first.IsZero() {
				first = now
			}
			last = now
			rep.Bytes += int64(n)
			rep.Reads++
			p.Write(buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
	}
	if readErr != nil {
		p.Fail(readErr)
	} else {
		p.Close()
	}

	a := p.Answer()
	rep.Dialect, rep.AnswerStatus, rep.Usage = p.Dialect(), a.Status().String(), a.Usage()
	rep.Error = describeError(a.Err())
	rep.Tokens = len(tokenTimes)
	if !first.IsZero() {
		rep.TTFBMS, rep.LastByteMS = msp(first.Sub(start)), msp(last.Sub(start))
		rep.SpreadMS = ms(last.Sub(first))
	}
	if len(tokenTimes) > 0 {
		rep.TTFTMS = msp(tokenTimes[0].Sub(start))
	}
	rep.Gaps = gaps(tokenTimes)
	rep.Buffering = buffering.Judge(rep.Tokens, last.Sub(first))
	rep.Verdict, rep.Explanation = verdict(rep, last.Sub(first))

	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return rep, fmt.Errorf("%s %s: status %s", method, url, resp.Status)
	case readErr != nil:
		return rep, fmt.Errorf("%s %s: the body failed after %d bytes: %w", method, url, rep.Bytes, readErr)
	}
	return rep, nil
}

// verdict says in words whether the stream was streamed or held.
func verdict(r *probeReport, spread time.Duration) (string, string) {
	size := humanBytes(r.Bytes)
	// Whether the answer was held is package buffering's verdict, the same
	// the widget's metrics give; "batched" is the probe's own refinement of
	// a stream that did arrive over time.
	v := buffering.Judge(r.Tokens, spread)
	switch {
	case v == buffering.Unknown && r.Tokens < 2:
		return "inconclusive", fmt.Sprintf("Inconclusive: only %d token(s) arrived (%s), too few to tell streaming from buffering.", r.Tokens, size)
	case v == buffering.Unknown:
		return "inconclusive", fmt.Sprintf(
			"Inconclusive: the %d tokens (%s) arrived within %s, which a fast model can do on its own; "+
				"at least %d tokens arriving within %s would say the stream was held.",
			r.Tokens, size, fmtMS(ms(spread)), buffering.MinTokens, fmtMS(ms(buffering.Window)))
	case v == buffering.Buffered:
		return "buffered", fmt.Sprintf(
			"Buffered: all %d tokens (%s) arrived together, the first and last byte %s apart, %s after the request. "+
				"Something between the model and you is holding the stream and releasing it at the end: "+
				"a reverse proxy buffering responses (nginx: proxy_buffering off, or the header X-Accel-Buffering: no), "+
				"a CDN or load balancer, response compression, or a server that does not flush after each event.",
			r.Tokens, size, fmtMS(ms(spread)), fmtMS(*r.TTFBMS))
	case float64(r.Tokens)/float64(r.Reads) >= burstTokensPerRead:
		return "batched", fmt.Sprintf(
			"Batched: the %d tokens arrived over %s but in only %d reads (%.0f tokens per read, longest wait %s). "+
				"Something is flushing the stream in blocks, such as a proxy buffer of a few kilobytes or compression.",
			r.Tokens, fmtMS(ms(spread)), r.Reads, float64(r.Tokens)/float64(r.Reads), fmtMS(r.Gaps.Max))
	}
	return "streaming", fmt.Sprintf(
		"Streaming: %d tokens arrived over %s in %d reads as they were generated (time to first token %s, median gap %s).",
		r.Tokens, fmtMS(ms(spread)), r.Reads, fmtMS(*r.TTFTMS), fmtMS(r.Gaps.P50))
}

// gaps computes the inter-token gap percentiles (nearest rank).
func gaps(times []time.Time) gapStats {
	if len(times) < 2 {
		return gapStats{}
	}
	d := make([]float64, 0, len(times)-1)
	for i := 1; i < len(times); i++ {
		d = append(d, ms(times[i].Sub(times[i-1])))
	}
	sort.Float64s(d)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(d)))) - 1
		return d[max(0, min(i, len(d)-1))]
	}
	return gapStats{P50: rank(0.50), P95: rank(0.95), Max: d[len(d)-1]}
}

// ms is a duration in milliseconds, rounded to 0.01 ms.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

func msp(d time.Duration) *float64 { v := ms(d); return &v }

func fmtMS(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}
