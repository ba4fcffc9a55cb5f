package relay

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/holdback"
	"github.com/trickle-dev/trickle/relay/internal/sink"
	"github.com/trickle-dev/trickle/relay/internal/upstream"
	"github.com/trickle-dev/trickle/stream"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	logger     *slog.Logger
	widget     fs.FS
	widgetHint string // why there is no widget, for the 503 (WithMissingWidget)
	pages      fs.FS

	heartbeat    time.Duration
	retryHint    time.Duration
	grace        time.Duration
	retention    time.Duration
	writeTimeout time.Duration
	cutWait      time.Duration

	maxStreams     int
	maxBodyBytes   int64
	bodyTimeout    time.Duration
	maxEventSize   int
	maxEvents      int
	maxStreamBytes int
	maxRetained    int64
	maxConnsPerIP  int
	allowFaults    bool

	origins       []string
	hosts         []string // WithAllowedHosts
	originRefusal func(*OriginError) string
	token         string
	guard         guardConfig // identity.go, admit.go, limits.go

	sim      SimDefaults
	upstream *upstream.Upstream
	holdBack *holdback.Settings

	store Store
	lease time.Duration

	badPath WritePath // an unknown WithWritePath, refused by check

	writePath sink.Path
}

// WritePath is how the relay writes events to clients' sockets.
type WritePath string

const (
	// FastWrites (the default) writes on connections taken over from
	// net/http: SSE as HTTP/1.1 chunks, WebSocket frames on a connection
	// the relay owns after coder/websocket's handshake, each sent without
	// blocking from the goroutine that produced the event when the socket
	// takes it.
	FastWrites WritePath = "fast"
	// PlainWrites writes through the libraries: net/http's response
	// writer flushed by http.ResponseController, coder/websocket's
	// Conn.Write, from each reader's goroutine. Same bytes, for
	// comparison (bench/load -path).
	PlainWrites WritePath = "plain"
)

// WithWritePath picks how events reach clients' sockets (default
// FastWrites).
func WithWritePath(p WritePath) Option {
	return func(c *config) {
		path, err := sink.ParsePath(string(p))
		if err != nil {
			c.badPath = p
			return
		}
		c.writePath = path
	}
}

// SimDefaults are the simulated model's timing when the request does not
// set it with query parameters.
type SimDefaults struct {
	TTFT       time.Duration // time to first token
	Gap        time.Duration // between tokens
	Jitter     time.Duration // each delay varies by up to ± this
	TokenChars int           // characters per token
}

// Upstream is a real model API the relay forwards requests to instead of
// using the simulated model (WithUpstream).
type Upstream struct {
	// URL is the full endpoint, e.g. https://host/v1/chat/completions,
	// https://host/v1/messages or http://127.0.0.1:11434/api/chat.
	URL string
	// Dialect is the upstream's API: one of UpstreamDialects.
	Dialect stream.Dialect
	// Key is sent to the upstream only (never to clients).
	Key string
	// Model replaces the request's model when not empty.
	Model string
	// FirstTokenTimeout, IdleTimeout and TotalTimeout bound the wait for
	// the first byte of the answer, between two reads, and overall; zero
	// takes the one in DefaultSettings().Upstream.
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration // see FirstTokenTimeout
	TotalTimeout      time.Duration // see FirstTokenTimeout
	// Retries is how many times a request that failed before its first
	// byte is tried again (never after: the answer would be doubled); zero
	// never retries (trickle serve's flag takes
	// DefaultSettings().Upstream.Retries).
	Retries int
	// Client makes the requests; nil means a client with sane timeouts.
	Client *http.Client
}

// UpstreamDialects lists the dialects an Upstream can call.
func UpstreamDialects() []stream.Dialect { return upstream.Dialects() }

// ErrBadOption reports an option value that cannot work; every
// *OptionError matches it.
var ErrBadOption = errors.New("relay: bad option")

// OptionError names the option New refused, its value and why.
type OptionError struct {
	Option string // the option's function, e.g. "WithHeartbeat"
	Field  string // the field of a struct option ("TTFT" of WithSimDefaults); may be empty
	Value  any    // the value refused
	Reason string // e.g. "the duration must be positive"
}

func (e *OptionError) Error() string {
	name := e.Option
	if e.Field != "" {
		name += " (" + e.Field + ")"
	}
	return fmt.Sprintf("%v: %s(%v): %s", ErrBadOption, name, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadOption) true.
func (e *OptionError) Is(target error) bool { return target == ErrBadOption }

// Defaults are the values of everything no option sets; the options'
// comments and trickle serve's flags refer to them, so each default is
// written once, in DefaultSettings.
type Defaults struct {
	Heartbeat    time.Duration // the silence before a keep-alive comment (WithHeartbeat)
	RetryHint    time.Duration // the SSE retry: value sent to clients (WithRetryHint)
	Grace        time.Duration // how long a generation outlives its last client (WithGrace)
	Retention    time.Duration // how long a finished stream stays resumable (WithRetention)
	WriteTimeout time.Duration // the bound on each write to a client (WithWriteTimeout)
	CutWait      time.Duration // how long a cut client has to read up to the cut (WithCutWait)
	Lease        time.Duration // how long a stream outlives its silent instance, with a shared store (WithLease)
	// BodyTimeout bounds the reading of a request's body.
	BodyTimeout time.Duration

	MaxStreams   int   // the generations running at once (WithMaxStreams)
	MaxBodyBytes int64 // a request body's size (WithMaxBodyBytes)
	MaxEventSize int   // one event's data (WithMaxEventSize)
	MaxEvents    int   // the events of one stream (WithMaxEvents)
	// MaxStreamBytes bounds one stream's log in bytes: what a stream may
	// hold of the relay's memory, for as long as it is kept.
	MaxStreamBytes int
	// MaxRetainedBytes bounds the bytes of every stream's log together,
	// running and finished: the relay's memory for streams.
	MaxRetainedBytes int64
	// MaxConnsPerAddr bounds the connections one client address (an IPv6
	// /64) may hold open (0: no bound), on a listener the relay wraps
	// (Server.Listener).
	MaxConnsPerAddr int

	Sim SimDefaults // the simulated model's timing (WithSimDefaults)
	// Upstream holds the timeouts an Upstream left at zero gets, and the
	// retries trickle serve asks for (Upstream.Retries has no default:
	// zero never retries).
	Upstream UpstreamDefaults
}

// UpstreamDefaults are the Upstream settings of DefaultSettings.
type UpstreamDefaults struct {
	FirstTokenTimeout time.Duration // the wait for the answer's first byte
	IdleTimeout       time.Duration // the wait between two reads
	TotalTimeout      time.Duration // the whole answer's
	Retries           int           // what trickle serve's --upstream-retries takes
}

// DefaultSettings returns the relay's defaults.
func DefaultSettings() Defaults {
	return Defaults{
		Heartbeat:        15 * time.Second,
		RetryHint:        2 * time.Second,
		Grace:            10 * time.Second,
		Retention:        5 * time.Minute,
		WriteTimeout:     10 * time.Second,
		CutWait:          time.Minute,
		Lease:            3 * time.Second,
		BodyTimeout:      10 * time.Second,
		MaxStreams:       20000,
		MaxBodyBytes:     1 << 20,
		MaxEventSize:     256 << 10,
		MaxEvents:        200000,
		MaxStreamBytes:   64 << 20,
		MaxRetainedBytes: 1 << 30,
		MaxConnsPerAddr:  256,
		Sim:              SimDefaults{TTFT: 400 * time.Millisecond, Gap: 30 * time.Millisecond, Jitter: 15 * time.Millisecond, TokenChars: 4},
		Upstream:         UpstreamDefaults{FirstTokenTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second, TotalTimeout: 10 * time.Minute, Retries: 2},
	}
}

func defaults() config {
	d := DefaultSettings()
	return config{
		logger:         slog.Default(),
		originRefusal:  defaultOriginRefusal,
		heartbeat:      d.Heartbeat,
		retryHint:      d.RetryHint,
		grace:          d.Grace,
		retention:      d.Retention,
		writeTimeout:   d.WriteTimeout,
		cutWait:        d.CutWait,
		lease:          d.Lease,
		maxStreams:     d.MaxStreams,
		maxBodyBytes:   d.MaxBodyBytes,
		bodyTimeout:    d.BodyTimeout,
		maxEventSize:   d.MaxEventSize,
		maxEvents:      d.MaxEvents,
		maxStreamBytes: d.MaxStreamBytes,
		maxRetained:    d.MaxRetainedBytes,
		maxConnsPerIP:  d.MaxConnsPerAddr,
		sim:            d.Sim,
	}
}

// WithLogger sets the structured logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithWidget serves the built widget at /trickle/ (a folder holding
// trickle.js); a folder without trickle.js answers 503 there. Without it
// or WithMissingWidget the relay serves no /trickle/.
func WithWidget(f fs.FS) Option { return func(c *config) { c.widget = f } }

// WithMissingWidget is what the 503 at /trickle/ says when there is no
// widget to serve: how to get one. It makes the relay answer at /trickle/
// even without WithWidget.
func WithMissingWidget(hint string) Option { return func(c *config) { c.widgetHint = hint } }

// WithPages serves the example pages at /examples/ and redirects / there.
// Without it the relay serves neither.
func WithPages(f fs.FS) Option { return func(c *config) { c.pages = f } }

// WithHeartbeat sets how long a stream may stay silent before the relay
// writes a keep-alive comment (default: Defaults.Heartbeat), so that proxies do
// not time out an answer whose model is thinking.
func WithHeartbeat(d time.Duration) Option { return func(c *config) { c.heartbeat = d } }

// WithRetryHint sets the SSE retry: value sent to clients (default:
// Defaults.RetryHint).
func WithRetryHint(d time.Duration) Option { return func(c *config) { c.retryHint = d } }

// WithGrace sets how long a generation goes on after its last client
// disconnected, waiting for a resume, before it is cancelled (default:
// Defaults.Grace).
func WithGrace(d time.Duration) Option { return func(c *config) { c.grace = d } }

// WithRetention sets how long a finished stream stays resumable (default:
// Defaults.Retention).
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithWriteTimeout bounds each write to a client (default:
// Defaults.WriteTimeout); a client that does not read in time is cut and
// may resume.
func WithWriteTimeout(d time.Duration) Option { return func(c *config) { c.writeTimeout = d } }

// WithCutWait sets how long a client cut for not reading within the write
// timeout may take to read what the relay had already sent and hang up
// before its disconnect grace period starts (default: Defaults.CutWait; 0
// starts the grace period at the cut). A slow client only learns of the cut once it
// has read up to it, so the grace period counts from then: a client that
// is behind but still reading can resume without losing the end of its
// answer, while one that never reads again costs at most this long more.
func WithCutWait(d time.Duration) Option { return func(c *config) { c.cutWait = d } }

// WithMaxStreams caps the generations running at once (default:
// Defaults.MaxStreams); beyond it requests get 429 with Retry-After.
func WithMaxStreams(n int) Option { return func(c *config) { c.maxStreams = n } }

// WithMaxBodyBytes caps a request body (default: Defaults.MaxBodyBytes);
// beyond it 413.
func WithMaxBodyBytes(n int64) Option { return func(c *config) { c.maxBodyBytes = n } }

// WithBodyTimeout bounds how long a request's body may take to arrive
// (default: Defaults.BodyTimeout): a client that sends it a byte at a
// time would otherwise hold a connection and its goroutine for as long as
// it likes. Past it the request gets 408.
func WithBodyTimeout(d time.Duration) Option { return func(c *config) { c.bodyTimeout = d } }

// WithMaxEventSize caps one event's data (default:
// Defaults.MaxEventSize); an upstream event over it fails the stream.
func WithMaxEventSize(n int) Option { return func(c *config) { c.maxEventSize = n } }

// WithMaxEvents caps the events of one stream (default:
// Defaults.MaxEvents).
func WithMaxEvents(n int) Option { return func(c *config) { c.maxEvents = n } }

// WithMaxStreamBytes caps the bytes of one stream's log (default:
// Defaults.MaxStreamBytes): a stream over it fails as one over
// WithMaxEvents does, and what it holds of the relay's memory is bounded
// whatever its events' sizes (the events' cap times their size cap would
// be tens of gigabytes).
func WithMaxStreamBytes(n int) Option { return func(c *config) { c.maxStreamBytes = n } }

// WithMaxRetainedBytes caps the bytes of every stream's log together
// (default: Defaults.MaxRetainedBytes), running ones and finished ones
// kept for WithRetention: past it the oldest finished streams are
// forgotten first (a resume of one finds it gone); a running stream never
// is. When the running streams alone fill it, the one that grows fails as
// one over WithMaxStreamBytes does, and new streams are refused (429,
// memory_full, Retry-After).
func WithMaxRetainedBytes(n int64) Option { return func(c *config) { c.maxRetained = n } }

// WithMaxConnsPerAddr caps the connections one client address (IPv6: its
// /64) may hold open at once on the listener Server.Listener wraps
// (default: Defaults.MaxConnsPerAddr; 0 lifts the cap). A connection over
// it gets one answer, 429 too_many_connections with Retry-After, and is
// closed. Behind a reverse proxy every client comes from the proxy's
// address: lift the cap there (0) and let the proxy cap its clients.
func WithMaxConnsPerAddr(n int) Option { return func(c *config) { c.maxConnsPerIP = n } }

// WithAllowFaults lets the fault a test asks for in the query
// (drop_after) cut a real upstream's stream too. Without it the faults act
// on the simulated model only, and a request that asks a relay with an
// upstream for one is refused (400, ErrFaultRefused): on a relay that
// spends a real key, no client can make it drop what it paid for.
func WithAllowFaults(allow bool) Option { return func(c *config) { c.allowFaults = allow } }

// WithAllowedOrigins lists the browser origins (e.g. "https://app.example")
// allowed to call the API cross-origin and to open the WebSocket; "*" allows
// any. By default only same-origin pages may.
func WithAllowedOrigins(origins ...string) Option {
	return func(c *config) { c.origins = append(c.origins, origins...) }
}

// WithAllowedHosts lists the host names (e.g. "relay.example") under which
// a relay without auth (no WithToken, no WithAuthSecret) answers a
// browser's API request. A page's request is refused (403,
// host_not_allowed) when its Host is a name other than localhost and
// these: a page of any site whose name an attacker points at the relay's
// address (DNS rebinding) would otherwise be same-origin with it and
// spend its key. A Host that is an IP address is always answered, since
// rebinding always comes under a name; a relay with auth checks
// identities instead.
func WithAllowedHosts(hosts ...string) Option {
	return func(c *config) { c.hosts = append(c.hosts, hosts...) }
}

// WithOriginRefusal phrases what a page of a refused origin is told (the
// JSON error's message, the WebSocket's trickle.status): say there how
// your deployment allows an origin. The default is the error and "add it
// to the relay's allowed origins".
func WithOriginRefusal(phrase func(*OriginError) string) Option {
	return func(c *config) {
		if phrase != nil {
			c.originRefusal = phrase
		}
	}
}

// WithToken requires clients to send "Authorization: Bearer <token>" (or,
// for WebSocket, ?access_token=) on the /v1 API.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithSimDefaults sets the simulated model's default timing (default:
// Defaults.Sim).
func WithSimDefaults(d SimDefaults) Option { return func(c *config) { c.sim = d } }

// WithUpstream forwards requests to a real model API instead of the
// simulated model.
func WithUpstream(u Upstream) Option {
	return func(c *config) {
		up := upstream.Upstream(u) // the same fields: the relay's copy
		c.upstream = &up
	}
}

// WithStore sets where stream logs are kept (default MemoryStore()).
// RedisStore shares them with the other relays using the same Redis.
func WithStore(st Store) Option { return func(c *config) { c.store = st } }

// WithLease sets, with a shared store, how long a stream outlives the
// instance generating it without news from it (default: Defaults.Lease): readers on
// other instances then get a terminal error instead of waiting forever.
// The instance renews its leases three times per period.
func WithLease(d time.Duration) Option { return func(c *config) { c.lease = d } }

// check names the first option whose value cannot work.
func (c *config) check() error {
	durations := []struct {
		option, field string
		value         time.Duration
		canZero       bool
	}{
		{"WithHeartbeat", "", c.heartbeat, false},
		{"WithWriteTimeout", "", c.writeTimeout, false},
		{"WithBodyTimeout", "", c.bodyTimeout, false},
		{"WithLease", "", c.lease, false},
		{"WithGrace", "", c.grace, true},
		{"WithRetention", "", c.retention, true},
		{"WithCutWait", "", c.cutWait, true},
		{"WithSimDefaults", "TTFT", c.sim.TTFT, true},
		{"WithSimDefaults", "Gap", c.sim.Gap, true},
		{"WithSimDefaults", "Jitter", c.sim.Jitter, true},
	}
	for _, d := range durations {
		if d.value < 0 || d.value == 0 && !d.canZero {
			want := "positive"
			if d.canZero {
				want = "zero or more"
			}
			return &OptionError{Option: d.option, Field: d.field, Value: d.value, Reason: "the duration must be " + want}
		}
	}
	limits := []struct {
		option string
		value  int64
	}{
		{"WithMaxStreams", int64(c.maxStreams)},
		{"WithMaxBodyBytes", c.maxBodyBytes},
		{"WithMaxEventSize", int64(c.maxEventSize)},
		{"WithMaxEvents", int64(c.maxEvents)},
		{"WithMaxStreamBytes", int64(c.maxStreamBytes)},
		{"WithMaxRetainedBytes", c.maxRetained},
	}
	for _, l := range limits {
		if l.value <= 0 {
			return &OptionError{Option: l.option, Value: l.value, Reason: "the limit must be positive"}
		}
	}
	if c.maxConnsPerIP < 0 {
		return &OptionError{Option: "WithMaxConnsPerAddr", Value: c.maxConnsPerIP, Reason: "the limit must be zero (no cap) or more"}
	}
	if c.badPath != "" {
		return &OptionError{Option: "WithWritePath", Value: fmt.Sprintf("%q", c.badPath), Reason: "want fast or plain"}
	}
	if c.sim.TokenChars < 0 {
		return &OptionError{Option: "WithSimDefaults", Field: "TokenChars", Value: c.sim.TokenChars, Reason: "must be zero or more"}
	}
	return c.guard.check(c)
}
