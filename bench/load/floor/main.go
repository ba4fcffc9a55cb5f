// Command floor is a benchmark instrument, not a relay: the least work a
// server can do to stream the relay's SSE bytes on this machine. It answers
// the load generator's requests (`POST /v1/chat/completions` with the
// simulated model's query parameters) with the same HTTP/1.1 head, the same
// chunked framing and byte-identical events (`id: <stream>:<seq>`, the plain
// dialect's data) on the same schedule (start + ttft + k gaps), so that the
// load generator measures it exactly as it measures `trickle serve`. What it
// leaves out is everything that makes the relay a relay: no log (no
// resume: a cut stream is lost), no heartbeats, no Stop, no limits, no
// per-stream goroutine or timer, no write deadline, no hang-up detection
// until a write fails.
//
// One goroutine owns every stream: a timing wheel of 1 ms slots; each tick
// it writes every event that became due with one non-blocking write(2) per
// stream, straight on the socket. The CPU it uses per event is therefore
// close to the kernel's cost of a loopback TCP write, and its added latency
// is the wheel's slot (under 1 ms) plus the kernel and the client: the
// floor under any relay's figures here (docs/PERFORMANCE.md, "Relay under
// load").
//
// It listens on loopback only and serves /healthz, /metrics (the few
// figures the load generator reads, under the relay's names) and
// /v1/streams/{id}/info (the stream's start).
package main

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
	tstream "github.com/trickle-dev/trickle/stream"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address (loopback only)")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(os.Stderr, "floor: --addr %q must be a loopback address\n", *addr)
		os.Exit(2)
	}
	f := newFloor()
	go f.run()
	srv := &http.Server{Addr: *addr, Handler: f.handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "floor (benchmark instrument) on http://%s/\n", *addr)
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// slot is the wheel's resolution: an event due at t is written at the first
// tick after the end of t's slot.
const slot = time.Millisecond

// wheelSlots bounds how far ahead an event can be scheduled (65 s).
const wheelSlots = 1 << 16

// script is what every stream of one request shape sends: the simulated
// model's events, encoded once around the id, with their due offsets.
type script struct {
	at     []time.Duration // due offset of event i from the stream's start
	before [][]byte        // bytes before "id: ..." (an event: line)
	after  [][]byte        // bytes after the id line (data lines, blank line)
}

// stream is one client's response.
type stream struct {
	id      string
	created time.Time
	fd      int
	conn    net.Conn // kept so that the fd stays open
	sc      *script
	next    int    // index of the next event
	pending []byte // bytes the socket did not take yet
	ended   bool   // the terminating chunk is written (or pending)
}

type floor struct {
	mu      sync.Mutex
	streams map[string]*stream
	scripts map[string]*script
	added   []*stream // handed to the wheel's goroutine at its next tick

	// Owned by the wheel's goroutine.
	wheel   [][]*stream
	tick    int64 // the last slot processed (unix nanos / slot)
	scratch []byte
	events0 []byte

	events atomic.Int64
	active atomic.Int64
}

func newFloor() *floor {
	return &floor{
		streams: map[string]*stream{},
		scripts: map[string]*script{},
		wheel:   make([][]*stream, wheelSlots),
		tick:    time.Now().UnixNano()/int64(slot) - 1,
	}
}

func (f *floor) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /metrics", f.metrics)
	mux.HandleFunc("GET /v1/streams/{id}/info", f.info)
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	return mux
}

func (f *floor) metrics(w http.ResponseWriter, _ *http.Request) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "trickle_connections_active %d\ntrickle_tokens_total %d\ntrickle_go_heap_inuse_bytes %d\ntrickle_go_stack_inuse_bytes %d\n",
		f.active.Load(), f.events.Load(), ms.HeapInuse, ms.StackInuse)
}

func (f *floor) info(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	s := f.streams[r.PathValue("id")]
	f.mu.Unlock()
	if s == nil {
		http.Error(w, "floor: no stream "+r.PathValue("id"), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		ID      string    `json:"id"`
		Created time.Time `json:"created"`
	}{s.id, s.created})
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// chat starts a stream: the relay's head and prelude, then the wheel
// writes its events.
func (f *floor) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "floor: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "floor: the request is not JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	sc, err := f.script(r.URL.RawQuery, req.Model, req.MaxTokens)
	if err != nil {
		http.Error(w, "floor: "+err.Error(), http.StatusBadRequest)
		return
	}
	var rb, qb [10]byte
	rand.Read(rb[:])
	rand.Read(qb[:])
	s := &stream{id: idEncoding.EncodeToString(rb[:]), created: time.Now(), sc: sc}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "floor: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// The relay's head (its headers, sorted), then the prelude chunk.
	pre := fmt.Sprintf(": trickle stream %s\nretry: 2000\n\n", s.id)
	head := "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: close\r\n" +
		"Content-Type: text/event-stream; charset=utf-8\r\nDate: " + time.Now().UTC().Format(http.TimeFormat) +
		"\r\nTransfer-Encoding: chunked\r\nX-Accel-Buffering: no\r\nX-Request-Id: req_" + idEncoding.EncodeToString(rb[:]) +
		"\r\nX-Trickle-Stream: " + s.id + "\r\nX-Trickle-Stream-Url: ../streams/" + s.id + "\r\n\r\n" +
		strconv.FormatInt(int64(len(pre)), 16) + "\r\n" + pre + "\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		conn.Close()
		return
	}
	raw, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		conn.Close()
		return
	}
	raw.Control(func(fd uintptr) { s.fd = int(fd) })
	s.conn = conn
	f.mu.Lock()
	f.streams[s.id] = s
	f.added = append(f.added, s)
	f.mu.Unlock()
	f.active.Add(1)
}

// script returns (building it once) the events for one request shape.
func (f *floor) script(query, model string, maxTokens int) (*script, error) {
	key := query + "\x00" + model + "\x00" + strconv.Itoa(maxTokens)
	f.mu.Lock()
	defer f.mu.Unlock()
	if sc := f.scripts[key]; sc != nil {
		return sc, nil
	}
	q, err := parseQuery(query)
	if err != nil {
		return nil, err
	}
	p := sim.Params{Dialect: tstream.Dialect(q["dialect"]), Answer: q["answer"], Model: model, Created: 1767225600, MaxTokens: maxTokens}
	ms := func(name string) (time.Duration, error) {
		v, err := strconv.ParseFloat(q[name], 64)
		return time.Duration(v * float64(time.Millisecond)), err
	}
	if p.TTFT, err = ms("ttft_ms"); err != nil {
		return nil, fmt.Errorf("ttft_ms: %w", err)
	}
	if p.Gap, err = ms("gap_ms"); err != nil {
		return nil, fmt.Errorf("gap_ms: %w", err)
	}
	if p.TokenChars, err = strconv.Atoi(q["token_chars"]); err != nil {
		return nil, fmt.Errorf("token_chars: %w", err)
	}
	if q["jitter_ms"] != "0" {
		return nil, errors.New("jitter_ms must be 0: every stream of a shape shares one script")
	}
	if p.Answer == "" {
		return nil, errors.New("answer is required: every stream of a shape shares one script")
	}
	gen, err := sim.New(p)
	if err != nil {
		return nil, err
	}
	sc := &script{}
	var due time.Duration
	for {
		m, ok := gen.Next()
		if !ok {
			break
		}
		due += m.Delay
		if due >= (wheelSlots-2)*slot {
			return nil, fmt.Errorf("an event is due %v after the start, past the wheel's %v", due, (wheelSlots-2)*slot)
		}
		enc := string(sse.AppendMessage(nil, sse.Message{ID: "\x01", Event: m.Event, Data: m.Data}))
		before, after, _ := strings.Cut(enc, "id: \x01\n")
		sc.at = append(sc.at, due)
		sc.before = append(sc.before, []byte(before))
		sc.after = append(sc.after, []byte(after))
	}
	if len(sc.at) == 0 {
		return nil, errors.New("the simulated answer has no events")
	}
	f.scripts[key] = sc
	return sc, nil
}

func parseQuery(q string) (map[string]string, error) {
	out := map[string]string{}
	for kv := range strings.SplitSeq(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	for _, k := range []string{"ttft_ms", "gap_ms", "jitter_ms", "token_chars"} {
		if out[k] == "" {
			return nil, fmt.Errorf("query parameter %s is required", k)
		}
	}
	return out, nil
}

// run is the wheel: every slot, write what became due.
func (f *floor) run() {
	for {
		now := time.Now().UnixNano()
		f.mu.Lock()
		added := f.added
		f.added = nil
		f.mu.Unlock()
		for _, s := range added {
			f.schedule(s)
		}
		// A slot is processed once it has ended: nothing in it is early.
		for f.tick+1 < now/int64(slot) {
			f.tick++
			i := f.tick % wheelSlots
			// send never schedules into the slot being processed (the
			// next event is at least a slot ahead), so its array is
			// reused.
			due := f.wheel[i]
			for _, s := range due {
				f.send(s)
			}
			clear(due)
			f.wheel[i] = due[:0]
		}
		time.Sleep(time.Until(time.Unix(0, (f.tick+2)*int64(slot))))
	}
}

// schedule puts s in the slot of its next event, or sooner when the
// socket still holds back bytes (a client behind: try again in 10 ms).
func (f *floor) schedule(s *stream) {
	at := f.tick + int64(10*time.Millisecond/slot)
	if s.next < len(s.sc.at) {
		next := s.created.Add(s.sc.at[s.next]).UnixNano() / int64(slot)
		if len(s.pending) == 0 || next < at {
			at = next
		}
	}
	at = max(at, f.tick+1)
	i := at % wheelSlots
	f.wheel[i] = append(f.wheel[i], s)
}

// send writes every event of s that is due (those due together go in one
// chunk, as the relay's batching does), after what the socket did not take
// before, in one write(2), and reschedules s.
func (f *floor) send(s *stream) {
	now := time.Now()
	ev := f.events0[:0]
	n := 0
	for s.next < len(s.sc.at) && !s.created.Add(s.sc.at[s.next]).After(now) {
		ev = append(ev, s.sc.before[s.next]...)
		s.next++
		ev = append(ev, "id: "...)
		ev = append(ev, s.id...)
		ev = append(ev, ':')
		ev = strconv.AppendInt(ev, int64(s.next), 10)
		ev = append(ev, '\n')
		ev = append(ev, s.sc.after[s.next-1]...)
		n++
	}
	b := append(f.scratch[:0], s.pending...)
	if n > 0 {
		b = strconv.AppendInt(b, int64(len(ev)), 16)
		b = append(b, '\r', '\n')
		b = append(b, ev...)
		b = append(b, '\r', '\n')
		f.events.Add(int64(n))
	}
	if s.next == len(s.sc.at) && !s.ended {
		b = append(b, "0\r\n\r\n"...)
		s.ended = true
	}
	f.scratch, f.events0 = b, ev
	w, err := syscall.Write(s.fd, b)
	if err != nil && !errors.Is(err, syscall.EAGAIN) {
		f.close(s)
		return
	}
	s.pending = append(s.pending[:0], b[max(w, 0):]...)
	if s.ended && len(s.pending) == 0 {
		f.close(s)
		return
	}
	f.schedule(s)
}

func (f *floor) close(s *stream) {
	s.conn.Close()
	f.active.Add(-1)
	// The stream stays in f.streams: the load generator asks for its
	// start after the run.
}
