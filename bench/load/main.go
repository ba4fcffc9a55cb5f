// Command load is the relay's load generator: it opens N concurrent streams
// against a running `trickle serve` on loopback, over SSE or WebSocket, at a
// fixed token rate from the simulated model, and reports delivery, the
// latency the relay adds, the relay's CPU and memory, and bytes per token.
//
// Shape of a run (bounded in count and time; it stops by itself):
//
//	0 .. ramp           open N streams, evenly spread
//	ramp .. ramp+idle   every stream connected, waiting for its first token:
//	                    the relay's memory per idle stream is sampled here
//	then for duration   tokens at --rate per stream; CPU is measured here
//
// Added latency of event k of a stream = its arrival time minus the time the
// simulated model scheduled it (the stream's start, from /info, plus ttft
// plus (k-1) gaps): it includes the relay's timer lateness, its write path,
// the kernel and the client's read.
//
// It never talks to anything but the loopback address it is given.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type result struct {
	Server            string  `json:"server"`
	WritePath         string  `json:"write_path,omitempty"`
	Transport         string  `json:"transport"`
	Client            string  `json:"client"`
	Streams           int     `json:"streams"`
	Connected         int     `json:"connected"`
	PeakActive        int     `json:"peak_active"`
	RatePerStream     float64 `json:"tokens_per_second_per_stream"`
	DurationS         float64 `json:"token_phase_seconds"`
	ExpectedEvents    int64   `json:"expected_events"`
	DeliveredEvents   int64   `json:"delivered_events"`
	DeliveredPct      float64 `json:"delivered_pct"`
	LostEvents        int64   `json:"lost_events"`
	DuplicatedEvents  int64   `json:"duplicated_events"`
	GapEvents         int64   `json:"events_skipped_mid_stream"`
	TruncatedStreams  int64   `json:"streams_without_end_marker"`
	TruncatedBecause  string  `json:"first_truncation_status,omitempty"`
	StalledStreams    int     `json:"stalled_streams,omitempty"`
	LatencyP50Ms      float64 `json:"added_latency_p50_ms"`
	LatencyP99Ms      float64 `json:"added_latency_p99_ms"`
	LatencyP999Ms     float64 `json:"added_latency_p999_ms"`
	LatencyMaxMs      float64 `json:"added_latency_max_ms"`
	ServerCPUPct      float64 `json:"relay_cpu_pct_of_one_core"`
	ClientCPUPct      float64 `json:"client_cpu_pct_of_one_core"`
	ServerCPUPerEvent float64 `json:"relay_cpu_us_per_event"`
	ClientCPUPerEvent float64 `json:"client_cpu_us_per_event"`
	ServerRunqWait    float64 `json:"relay_runqueue_wait_s_per_s"`
	ClientRunqWait    float64 `json:"client_runqueue_wait_s_per_s"`
	ServerRSSBaseMB   float64 `json:"relay_rss_base_mib"`
	ServerRSSIdleMB   float64 `json:"relay_rss_idle_mib"`
	ServerRSSPeakMB   float64 `json:"relay_rss_streaming_mib"`
	KBPerIdleStream   float64 `json:"relay_kib_per_idle_stream"`
	KBPerLiveStream   float64 `json:"relay_kib_per_streaming_stream"`
	GoKBPerIdleStream float64 `json:"relay_go_heap_stack_kib_per_idle_stream"`
	BytesPerToken     float64 `json:"wire_bytes_per_token"`
	Resumes           int64   `json:"resumes"`
	Errors            int64   `json:"errors"`
	FirstError        string  `json:"first_error,omitempty"`
	WallS             float64 `json:"wall_seconds"`
}

var (
	addr       = flag.String("addr", "127.0.0.1:8080", "relay address (loopback only)")
	client     = flag.String("client", defaultClient(), "epoll (Linux: a few threads read every socket) or goroutine (one goroutine per stream)")
	epollLoops = flag.Int("epoll-loops", 1, "threads of the epoll client")
	serverName = flag.String("server-name", "relay", "what is being measured (relay, floor), recorded in the result")
	writePath  = flag.String("path", "", "the relay's write path (trickle serve --write-path: fast or plain), recorded in the result")
	pid        = flag.Int("server-pid", 0, "relay process id, to read its CPU and memory from /proc")
	n          = flag.Int("n", 1000, "concurrent streams")
	transport  = flag.String("transport", "sse", "sse or ws")
	ramp       = flag.Duration("ramp", 10*time.Second, "time over which the streams are opened")
	idle       = flag.Duration("idle", 4*time.Second, "time every stream waits, connected, before its first token (after the ramp)")
	duration   = flag.Duration("duration", 20*time.Second, "token phase per stream")
	rate       = flag.Float64("rate", 20, "tokens per second per stream")
	tokenChars = flag.Int("token-chars", 4, "characters per token")
	timeLimit  = flag.Duration("timeout", 3*time.Minute, "hard stop for the whole run")
	stallEvery = flag.Int("stall-every", 0, "fault injection: every Nth stream stops reading once (0: none)")
	stallAfter = flag.Int("stall-after", 20, "a stalled stream stops reading after this many events")
	stallFor   = flag.Duration("stall", 15*time.Second, "how long a stalled stream stops reading")
)

func main() {
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(os.Stderr, "load: --addr %q must be a loopback address\n", *addr)
		os.Exit(2)
	}
	res, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
}

func run() (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *timeLimit)
	defer cancel()
	deadline, _ := ctx.Deadline()
	gap := time.Duration(float64(time.Second) / *rate)
	tokens := int(duration.Seconds() * *rate)
	ttft := *ramp + *idle
	query := fmt.Sprintf("?dialect=plain&answer=sample-100k&ttft_ms=%d&gap_ms=%g&jitter_ms=0&token_chars=%d",
		ttft.Milliseconds(), float64(gap)/float64(time.Millisecond), *tokenChars)
	body := fmt.Sprintf(`{"model":"load","stream":true,"max_tokens":%d,"messages":[{"role":"user","content":"load"}]}`, tokens)

	var wire atomic.Int64
	infoClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	res := &result{Server: *serverName, WritePath: *writePath, Transport: *transport, Client: *client, Streams: *n, RatePerStream: *rate, DurationS: duration.Seconds()}
	recs := make([]*streamRec, *n)
	var errs atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		errs.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	var connected atomic.Int64

	baseRSS, baseGo := rss(*pid), goMem(scrape(infoClient))
	var idleGo float64
	wall0 := time.Now()
	var cpuStart, cpuEnd time.Duration
	var sWait0, sWait1, cWait0, cWait1 time.Duration
	var tok0, tok1 float64
	var cru0, cru1 syscall.Rusage
	var tStart, tEnd time.Time
	var idleRSS, peakRSS float64
	var peakActive int

	// Sampler: idle memory in the middle of the idle window, CPU over the
	// token phase, peak memory while streaming.
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		at := func(d time.Duration) <-chan time.Time { return time.After(time.Until(wall0.Add(d))) }
		select {
		case <-at(*ramp + *idle/2):
			idleRSS = rss(*pid)
			m := scrape(infoClient)
			peakActive = int(m["trickle_connections_active"])
			idleGo = goMem(m)
		case <-ctx.Done():
			return
		}
		// Stream i opens at i*ramp/N and streams from ramp+idle after
		// that for duration: every stream is streaming from 2*ramp+idle
		// until ramp+idle+duration.
		select {
		case <-at(2**ramp + *idle):
		case <-ctx.Done():
			return
		}
		cpuStart, tStart = procCPU(*pid), time.Now()
		tok0 = scrape(infoClient)["trickle_tokens_total"]
		_, sWait0 = sched(*pid)
		_, cWait0 = sched(os.Getpid())
		syscall.Getrusage(syscall.RUSAGE_SELF, &cru0)
		end := wall0.Add(*idle + *ramp + *duration - time.Second)
		if !end.After(tStart) {
			end = tStart.Add(500 * time.Millisecond)
		}
		for time.Now().Before(end) {
			select {
			case <-time.After(500 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			if r := rss(*pid); r > peakRSS {
				peakRSS = r
			}
		}
		cpuEnd, tEnd = procCPU(*pid), time.Now()
		tok1 = scrape(infoClient)["trickle_tokens_total"]
		_, sWait1 = sched(*pid)
		_, cWait1 = sched(os.Getpid())
		syscall.Getrusage(syscall.RUSAGE_SELF, &cru1)
	}()

	streams, err := newStreamer(*client, deadline)
	if err != nil {
		return nil, err
	}
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	var wg sync.WaitGroup
	interval := *ramp / time.Duration(max(*n, 1))
	for i := range *n {
		if d := time.Until(wall0.Add(interval * time.Duration(i))); d > 0 {
			time.Sleep(d)
		}
		rec := &streamRec{arrived: make([]int64, tokens+1)}
		if *stallEvery > 0 && i%*stallEvery == *stallEvery-1 {
			rec.stallAt, rec.stallFor = *stallAfter, *stallFor
			res.StalledStreams++
		}
		recs[i] = rec
		wg.Add(1)
		streams.start(ctx, query, body, rec, &connected, &wire, func(err error) {
			if err != nil {
				fail(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	streams.close()
	<-sampleDone
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	res.WallS = time.Since(wall0).Seconds()

	// Anchor every stream at its start as the relay saw it.
	starts := make([]int64, *n)
	var iwg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, rec := range recs {
		if rec.id == "" {
			continue
		}
		sem <- struct{}{}
		iwg.Go(func() {
			defer func() { <-sem }()
			created, err := streamCreated(infoClient, rec.id)
			if err != nil {
				fail(err)
				return
			}
			starts[i] = created.UnixNano()
		})
	}
	iwg.Wait()

	var lat []int64
	for i, rec := range recs {
		res.ExpectedEvents += int64(tokens + 1)
		got := rec.delivered()
		res.DeliveredEvents += int64(got)
		res.LostEvents += int64(tokens + 1 - got)
		res.DuplicatedEvents += int64(rec.dups)
		res.GapEvents += int64(rec.gaps)
		res.Resumes += int64(rec.resumes)
		if !rec.done {
			res.TruncatedStreams++
			if res.TruncatedBecause == "" {
				res.TruncatedBecause = rec.id + ": " + rec.status
			}
		}
		if starts[i] == 0 {
			continue
		}
		for k, at := range rec.arrived {
			if at == 0 {
				continue
			}
			// Event k+1 is due ttft + k gaps after the start; the end
			// marker goes out with the last token.
			due := starts[i] + int64(ttft) + int64(min(k, tokens-1))*int64(gap)
			lat = append(lat, at-due)
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
	}
	res.Connected = int(connected.Load())
	res.PeakActive = peakActive
	res.DeliveredPct = 100 * float64(res.DeliveredEvents) / float64(max(res.ExpectedEvents, 1))
	res.LatencyP50Ms, res.LatencyP99Ms, res.LatencyP999Ms = pct(0.50), pct(0.99), pct(0.999)
	if len(lat) > 0 {
		res.LatencyMaxMs = float64(lat[len(lat)-1]) / 1e6
	}
	if tEnd.After(tStart) {
		res.ServerCPUPct = 100 * float64(cpuEnd-cpuStart) / float64(tEnd.Sub(tStart))
		res.ServerRunqWait = float64(sWait1-sWait0) / float64(tEnd.Sub(tStart))
		if tok1 > tok0 {
			res.ServerCPUPerEvent = float64(cpuEnd-cpuStart) / float64(time.Microsecond) / (tok1 - tok0)
		}
		res.ClientRunqWait = float64(cWait1-cWait0) / float64(tEnd.Sub(tStart))
		if tok1 > tok0 {
			cpu := cru1.Utime.Nano() + cru1.Stime.Nano() - cru0.Utime.Nano() - cru0.Stime.Nano()
			res.ClientCPUPerEvent = float64(cpu) / 1e3 / (tok1 - tok0)
		}
	}
	clientCPU := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	res.ClientCPUPct = 100 * float64(clientCPU) / float64(time.Since(wall0))
	res.ServerRSSBaseMB, res.ServerRSSIdleMB, res.ServerRSSPeakMB = baseRSS/1024, idleRSS/1024, peakRSS/1024
	if *n > 0 {
		res.KBPerIdleStream = (idleRSS - baseRSS) / float64(*n)
		res.GoKBPerIdleStream = (idleGo - baseGo) / float64(*n)
		res.KBPerLiveStream = (peakRSS - baseRSS) / float64(*n)
	}
	if res.DeliveredEvents > 0 {
		res.BytesPerToken = float64(wire.Load()) / float64(res.DeliveredEvents)
	}
	res.Errors = errs.Load()
	if v := firstErr.Load(); v != nil {
		res.FirstError = v.(string)
	}
	fmt.Fprintf(os.Stderr, "load %s %s (%s client): %d/%d connected, %.3f%% delivered (%d lost, %d duplicated, %d streams without end marker), %d resumes, %d errors; added latency p50 %.2f ms p99 %.2f ms; relay %.0f%% CPU, %.2f µs/event (waited %.1f s/s for a CPU), client %.2f µs/event; %.1f KiB RSS (%.1f KiB Go heap+stacks)/idle stream; %.1f B/token\n",
		res.Server, res.Transport, res.Client, res.Connected, *n, res.DeliveredPct, res.LostEvents, res.DuplicatedEvents, res.TruncatedStreams, res.Resumes, res.Errors,
		res.LatencyP50Ms, res.LatencyP99Ms, res.ServerCPUPct, res.ServerCPUPerEvent, res.ServerRunqWait, res.ClientCPUPerEvent,
		res.KBPerIdleStream, res.GoKBPerIdleStream, res.BytesPerToken)
	runtime.KeepAlive(recs)
	return res, nil
}

// streamer runs streams: start returns at once (after connecting, at
// most) and done is called once when the stream has ended.
type streamer interface {
	start(ctx context.Context, query, body string, rec *streamRec, connected, wire *atomic.Int64, done func(error))
	close()
}

func defaultClient() string {
	if hasEpoll {
		return "epoll"
	}
	return "goroutine"
}

func newStreamer(kind string, deadline time.Time) (streamer, error) {
	switch kind {
	case "epoll":
		return newEpollClient(*epollLoops, deadline)
	case "goroutine":
		return goroutineClient{}, nil
	}
	return nil, fmt.Errorf("-client %q: want epoll or goroutine", kind)
}

// goroutineClient runs each stream on a goroutine of its own, reading a
// blocking connection: portable, and several times the epoll client's
// cost per event.
type goroutineClient struct{}

func (goroutineClient) start(ctx context.Context, query, body string, rec *streamRec, connected, wire *atomic.Int64, done func(error)) {
	go func() { done(runStream(ctx, query, body, rec, connected, wire)) }()
}

func (goroutineClient) close() {}

// maxResumes bounds how often one stream reconnects (as the widget does,
// with Last-Event-ID) after its connection was cut.
const maxResumes = 5

// runStream reads one stream to its end over transport, resuming after
// every cut from the last event it got, as the widget does.
func runStream(ctx context.Context, query, body string, rec *streamRec, connected *atomic.Int64, wire *atomic.Int64) error {
	deadline, _ := ctx.Deadline()
	s := &scanner{rec: rec, wire: wire}
	for attempt := 0; ; attempt++ {
		end, err := oneConnection(deadline, query, body, s, attempt)
		if again, err := afterConnection(ctx, s, attempt, end, err, connected); !again {
			return err
		}
	}
}

// afterConnection decides, when one connection of a stream has ended,
// whether to resume (again) or how the stream ended (nil: read to its end).
func afterConnection(ctx context.Context, s *scanner, attempt int, end endKind, err error, connected *atomic.Int64) (again bool, _ error) {
	rec := s.rec
	if attempt == 0 && rec.id != "" {
		connected.Add(1)
	}
	if rec.done || end == endClean && err == nil {
		// A clean end without the end marker is a truncated stream: the
		// counts show it as lost events.
		return false, nil
	}
	if rec.id == "" || attempt == maxResumes || ctx.Err() != nil {
		return false, fmt.Errorf("stream %s after %d events: %w", rec.id, rec.last, err)
	}
	rec.resumes++
	// A new connection starts with a clean line state.
	s.partial, s.seq, s.status, s.hasData, s.isDone = s.partial[:0], 0, false, false, false
	return true, nil
}

// request is what connection number attempt of a stream sends: the first
// request, or a resume after the last event seen.
func request(query, body string, rec *streamRec, attempt int) []byte {
	var req []byte
	switch {
	case *transport == "ws":
		req = fmt.Appendf(nil, "GET /v1/ws%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", query, *addr, wsKey())
		first := body
		if attempt > 0 {
			first = fmt.Sprintf(`{"type":"resume","stream":%q,"last_event_id":"%s:%d"}`, rec.id, rec.id, rec.last)
		}
		req = append(req, maskedText([]byte(first))...)
	case attempt == 0:
		req = fmt.Appendf(nil, "POST /v1/chat/completions%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nX-Trickle-Resume: on\r\nContent-Length: %d\r\n\r\n%s", query, *addr, len(body), body)
	default:
		req = fmt.Appendf(nil, "GET /v1/streams/%s HTTP/1.1\r\nHost: %s\r\nLast-Event-ID: %s:%d\r\n\r\n", rec.id, *addr, rec.id, rec.last)
	}
	return req
}

// acceptHead checks a response head and returns the decoder of its body.
func acceptHead(code int, head []byte, rec *streamRec) (body, error) {
	if *transport == "ws" {
		if code != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("status %d", code)
		}
		return &wsBody{}, nil
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("status %d", code)
	}
	if id := header(head, "X-Trickle-Stream"); id != "" && rec.id == "" {
		rec.id = id
	}
	return &chunkedBody{}, nil
}

// oneConnection opens one connection and reads it to its end.
func oneConnection(deadline time.Time, query, body string, s *scanner, attempt int) (endKind, error) {
	c, buf, err := dialRaw(*addr, deadline, request(query, body, s.rec, attempt), s.wire)
	if err != nil {
		return endCut, err
	}
	defer c.Close()
	code, head, rest, err := readHead(c, buf, s.wire)
	if err != nil {
		return endCut, err
	}
	b, err := acceptHead(code, head, s.rec)
	if err != nil {
		return endCut, fmt.Errorf("%w: %s", err, discard(c, rest))
	}
	return readBody(c, buf, rest, b, s)
}

func streamCreated(c *http.Client, id string) (time.Time, error) {
	resp, err := c.Get("http://" + *addr + "/v1/streams/" + id + "/info")
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	var in struct{ Created time.Time }
	if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
		return time.Time{}, fmt.Errorf("info of %s: %w", id, err)
	}
	return in.Created, nil
}

// scrape reads the relay's /metrics into name → value.
func scrape(c *http.Client) map[string]float64 {
	out := map[string]float64{}
	resp, err := c.Get("http://" + *addr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = f
		}
	}
	return out
}

// goMem is the relay's Go heap plus stacks in use, in KiB.
func goMem(m map[string]float64) float64 {
	return (m["trickle_go_heap_inuse_bytes"] + m["trickle_go_stack_inuse_bytes"]) / 1024
}

// rss is the resident memory of a process in KiB (0 without a pid).
func rss(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return f
		}
	}
	return 0
}

// procCPU is the user+system CPU time a process has used.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// After the command: state(0) ... utime is field 14 of stat, index 11 here.
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}

// sched sums, over a process's threads, the time they ran and the time they
// waited runnable for a CPU (/proc/PID/task/*/schedstat): on a shared
// machine the wait says how much of the latency is other processes' doing.
func sched(pid int) (run, wait time.Duration) {
	if pid == 0 {
		return 0, 0
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		r, _ := strconv.ParseInt(f[0], 10, 64)
		w, _ := strconv.ParseInt(f[1], 10, 64)
		run += time.Duration(r)
		wait += time.Duration(w)
	}
	return run, wait
}
