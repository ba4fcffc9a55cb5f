package relay

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/auth"
	"github.com/trickle-dev/trickle/relay/internal/holdback"
	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/metrics"
	"github.com/trickle-dev/trickle/relay/internal/registry"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/internal/simclock"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/wire"
)

// Errors the relay reports.
var (
	ErrShuttingDown = registry.ErrShuttingDown
	ErrShutdownLate = errors.New("relay: shutdown deadline passed")
)

// Server is the relay. Create it with New and serve its Handler.
type Server struct {
	cfg     config
	log     *slog.Logger
	metrics *metrics.Metrics
	gates   *holdback.Gates // hold-back, when WithHoldBack set it
	handler http.Handler
	router  *mux.Router // the routes, for Routes

	reg *registry.Registry // the streams this instance knows

	// kickCtx is cancelled at the shutdown deadline: readers leave.
	kickCtx context.Context
	kick    context.CancelFunc
	clocks  *simclock.Clocks // the simulated generations' events, spread over the CPUs
	pumps   sync.WaitGroup   // readers on hijacked connections
	refused reqlog.Once      // origins refused so far, each logged once

	store    Store
	instance string  // this process in the store (random)
	follows  follows // the store's Follow calls under way

	verifier *auth.Verifier // with WithAuthSecret
	limits   *limit.Limiter // with a per-identity limit (limits.go)
	conns    *conns         // connections per address (conns.go)

	logCfg  streamlog.Config  // what every log shares
	readers streamlog.Readers // what every reader shares

	bodyDecodes     atomic.Int64 // request bodies decoded (admission decodes each once)
	messagesDecodes atomic.Int64 // the policy's decodes of a request's messages (once a request)
}

// logHost is the server as its logs see it (streamlog.Host).
type logHost Server

func (h *logHost) Token(first bool, d time.Duration) {
	m := h.metrics
	if first {
		m.TTFT.Observe(d.Seconds())
	} else {
		m.Gap.Observe(d.Seconds())
	}
	m.Events.Add(1)
}

func (h *logHost) Touch(l *streamlog.Log)                   { h.store.Append((*generated)(l)) }
func (h *logHost) Ended(l *streamlog.Log, state wire.State) { (*Server)(h).streamEnded(l, state) }
func (h *logHost) Watched(id string) bool                   { return h.store.Watched(id) }
func (h *logHost) DropFollowed(l *streamlog.Log)            { (*Server)(h).dropFollowed(l) }

func (s *Server) newLog(dialect string) *streamlog.Log {
	return streamlog.New(&s.logCfg, (*logHost)(s), newStreamID(), dialect)
}

// New makes a relay server.
func New(opts ...Option) (*Server, error) {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if u := cfg.upstream; u != nil {
		if err := checkUpstream(u); err != nil {
			return nil, err
		}
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	s := &Server{
		cfg:   cfg,
		log:   cfg.logger,
		reg:   registry.New(cfg.maxStreams, cfg.retention),
		store: cfg.store,
	}
	s.reg.SetMaxBytes(cfg.maxRetained)
	s.metrics = metrics.New(s.reg.Running())
	s.metrics.Retained, s.metrics.Evictions = s.reg.Retained(), s.reg.Evictions()
	if err := s.holdBack(); err != nil {
		return nil, err
	}
	if s.store == nil {
		s.store = MemoryStore()
	}
	s.conns = newConns(cfg.maxConnsPerIP)
	s.instance = newStreamID()
	s.clocks = simclock.New()
	s.kickCtx, s.kick = context.WithCancel(context.Background())
	s.logCfg = streamlog.Config{MaxEventSize: cfg.maxEventSize, MaxEvents: cfg.maxEvents, MaxBytes: cfg.maxStreamBytes, Grace: cfg.grace, Logger: cfg.logger,
		Retain: s.reg.Retain}
	s.readers = streamlog.Readers{Heartbeat: cfg.heartbeat, WriteTimeout: cfg.writeTimeout, CutWait: cfg.cutWait,
		Kick: s.kickCtx, Connections: &s.metrics.Connections, Cuts: &s.metrics.Cuts, Logger: cfg.logger}
	if err := s.store.Bind((*storeHost)(s)); err != nil {
		return nil, &OptionError{Option: "WithStore", Value: s.store, Reason: err.Error()}
	}
	s.newLimiter()
	if cfg.guard.authSecretSet {
		s.verifier = auth.NewVerifier(cfg.guard.authSecret, nil)
		s.verifier.Audience, s.verifier.Issuer = cfg.guard.audience, cfg.guard.issuer
	}
	s.handler = s.routes()
	return s, nil
}

// Handler is the relay's HTTP handler: the API (/v1/), the WebSocket,
// /healthz and /metrics; the widget at /trickle/ only with WithWidget (or
// WithMissingWidget), the example pages at /examples/ and the redirect of
// / to them only with WithPages. Every other path is a JSON 404, so the
// handler can sit at the root of a page's own mux, or under a prefix with
// http.StripPrefix (docs/embedding.md).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	r := mux.NewRouter()
	s.router = r
	r.HandleFunc("/healthz", s.healthz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/metrics", s.serveMetrics).Methods(http.MethodGet)

	api := r.PathPrefix("/v1").Subrouter()
	api.Use((&auth.Guard{Verifier: s.verifier, Token: s.cfg.token, Log: s.log}).Handler)
	api.HandleFunc("/chat/completions", s.chat).Methods(http.MethodPost)
	api.HandleFunc("/streams/{id}", s.resume).Methods(http.MethodGet)
	api.HandleFunc("/streams/{id}", s.stopStream).Methods(http.MethodDelete)
	api.HandleFunc("/streams/{id}/info", s.streamInfo).Methods(http.MethodGet)
	api.HandleFunc("/ws", s.websocket).Methods(http.MethodGet)

	if s.cfg.widget != nil || s.cfg.widgetHint != "" {
		r.PathPrefix("/trickle/").Handler(http.StripPrefix("/trickle", s.widgetHandler()))
	}
	if s.cfg.pages != nil {
		// The SSE vs WebSocket page was first published as compare/; old
		// links keep working.
		for _, old := range []string{"/examples/compare", "/examples/compare/"} {
			r.Path(old).Handler(http.RedirectHandler("/examples/transports/", http.StatusMovedPermanently))
		}
		r.PathPrefix("/examples/").Handler(http.StripPrefix("/examples", s.pagesHandler()))
		r.Path("/examples").Handler(http.RedirectHandler("/examples/", http.StatusMovedPermanently))
		// The home page is the pages' only when the relay serves them: a
		// relay mounted at the root of a site's mux leaves / alone.
		r.Path("/").Handler(http.RedirectHandler("/examples/", http.StatusFound))
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apierr.Write(w, wire.Error{Type: wire.TypeNotFound, Message: "relay: no route for " + r.Method + " " + r.URL.Path})
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apierr.Write(w, wire.Error{Type: wire.TypeMethodNotAllowed, Message: "relay: " + r.Method + " is not allowed on " + r.URL.Path})
	})
	return reqlog.Handler(s.log, s.crossOrigin(s.capConns(r)))
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.metrics.Handler.ServeHTTP(w, r)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	status := "ok"
	if s.reg.Draining() {
		status = "draining"
	} else if err := s.store.Ready(); err != nil {
		// The store's address and the error chain are the operator's:
		// they go to the log, the probe gets the status word.
		status = "store unavailable"
		s.log.Warn("health check: store unavailable", "store", s.store.String(), "err", err)
	}
	if status != "ok" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	b, _ := json.Marshal(struct {
		Status string `json:"status"`
	}{status})
	w.Write(append(b, '\n'))
}

// --- registry ---------------------------------------------------------

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newStreamID() string {
	var b [10]byte
	rand.Read(b[:])
	return idEncoding.EncodeToString(b[:])
}

// register admits a new generation (dropAfter is its fault injection, set
// before any reader can see it) for the request rid of the identity owner
// ("" with auth off), whose ticket ends with it, or refuses it (limit,
// shutdown).
func (s *Server) register(dialect string, dropAfter int, rid, owner string, t *limit.Ticket) (*streamlog.Log, error) {
	if err := s.reg.Reserve(); err != nil {
		switch {
		case errors.Is(err, registry.ErrTooMany):
			s.metrics.Rejected.Add(1)
		case errors.Is(err, registry.ErrMemoryFull):
			s.metrics.MemoryFull.Add(1)
			s.log.Warn("stream refused: the running streams hold the whole --max-retained-bytes", "err", err)
		}
		return nil, err
	}
	l := s.newLog(dialect)
	l.SetDropAfter(dropAfter)
	l.SetOwner(owner)
	if t != nil {
		l.OnEnd(func(u store.Usage) { t.End(u.CompletionTokens) })
	}
	if s.store.Durable() {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err := s.store.Begin(ctx, (*generated)(l))
		cancel()
		if err != nil {
			s.reg.Unreserve()
			return nil, err
		}
		l.Gate()
	}
	s.gates.Hold(l, rid) // after Begin: a gate left behind would wait forever
	s.reg.Add(l)
	s.metrics.Started.Add(1)
	return l, nil
}

// streamEnded is called (with l's lock held) once per stream generated
// here when it ends; the stream stays resumable for the retention window.
func (s *Server) streamEnded(l *streamlog.Log, state wire.State) {
	switch state {
	case streamlog.StateStopped:
		s.metrics.Stops.Add(1)
	case streamlog.StateFailed:
		s.metrics.Failures.Add(1)
	case streamlog.StateCancelled:
		s.metrics.Cancels.Add(1)
	}
	s.reg.Ended(l)
}

// storeTimeout bounds a request's own calls to the store.
const storeTimeout = 2 * time.Second

// find returns the stream id names: the one this instance holds, else
// (with a shared store) the stream followed from the store. The error is
// store.ErrUnknown, ErrExpired, ErrTrimmed or ErrStoreUnavailable.
func (s *Server) find(id string) (*streamlog.Log, error) {
	if l := s.reg.Lookup(id); l != nil {
		return l, nil
	}
	// Finds of one stream take turns, so that it is followed once.
	c := s.follows.begin(id)
	defer s.follows.end(id, c)
	if l := s.reg.Lookup(id); l != nil {
		return l, nil // another request followed it meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	_, err := s.store.Follow(ctx, id)
	l := s.follows.take(c)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, fmt.Errorf("relay: store %s followed stream %s without making its log (Store.Follow must call Host.NewFollower)", s.store, id)
	}
	if have, adopted := s.reg.Adopt(l); !adopted {
		l.Unfollow()
		return have, nil
	}
	l.DropIfUnread()
	return l, nil
}

// dropFollowed forgets a followed stream nobody read for the grace
// period; a later resume follows it from the store again.
func (s *Server) dropFollowed(l *streamlog.Log) {
	if s.reg.DropIdle(l) {
		l.Unfollow()
	}
}

// Shutdown stops accepting new streams, lets the running ones finish until
// ctx is done, then hands every connected client a clean (resumable) end
// and cancels what still runs. It returns ErrShutdownLate when it had to cut
// streams. Shut the http.Server down after it.
func (s *Server) Shutdown(ctx context.Context) error {
	s.reg.Drain()
	defer func() {
		// The ends just written, and their limits' counts, reach the
		// store before it closes.
		cctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		s.limits.Wait()
		s.store.Close(cctx)
	}()
	running := s.reg.Running()
	s.log.Info("relay draining", "streams", running.Load())
	if s.reg.WaitIdle(ctx) != nil {
		n := running.Load()
		s.kick()
		for _, l := range s.reg.All() {
			l.StopWith(streamlog.StateCancelled, "relay: shut down before the stream ended", false)
		}
		// Give the readers a moment to send their clean end.
		done := make(chan struct{})
		go func() { s.pumps.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		s.log.Warn("relay shutdown deadline passed", "streams_cut", n)
		return fmt.Errorf("%w with %d streams running; clients got a resumable end", ErrShutdownLate, n)
	}
	// Every stream has ended; its readers finish sending on their own
	// (those on hijacked connections are not tracked by http.Server).
	done := make(chan struct{})
	go func() { s.pumps.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.kick()
	}
	s.log.Info("relay drained")
	return nil
}
