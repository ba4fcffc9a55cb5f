package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/examples"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/stream"
)

const serveUsage = `trickle serve — the relay: widget, example pages, and answers streamed over SSE
and WebSocket from a simulated model (default) or a real upstream.

Usage:
  trickle serve [flags]

Endpoints:
  POST   /v1/chat/completions   OpenAI-compatible; stream:true answers SSE
  GET    /v1/streams/{id}       resume after Last-Event-ID (header or ?last_event_id=)
  DELETE /v1/streams/{id}       Stop: cancel the generation at once
  GET    /v1/streams/{id}/info  the stream: {"id","state","events","upstream_cancelled","readers",
                              "created"; "message": why it stopped, failed or was cancelled}
  GET    /v1/ws                 WebSocket: same SSE event text, one event per message
  GET    /trickle/  /examples/  the widget and the example pages
  GET    /healthz  /metrics     health and Prometheus metrics

Simulated model query parameters (POST and /v1/ws): dialect=openai|anthropic|
responses|gemini|ollama|plain, answer=NAME, ttft_ms, gap_ms, jitter_ms,
token_chars; faults drop_after=N, error_after=N, stall_after=N&stall_ms=D,
no_end=1.

Flags:
`

// listOption collects a repeatable, comma-separated flag.
type listOption []string

func (l *listOption) String() string { return strings.Join(*l, ",") }
func (l *listOption) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

func serve(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveContext(ctx, args, stdout, stderr, nil)
}

// serveContext runs the relay until ctx is done (a signal), then shuts
// down gracefully. ready, when not nil, gets the listening address.
func serveContext(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	d := relay.DefaultSettings()
	var (
		addr          = fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT` (loopback by default; 0.0.0.0:8080 to expose it)")
		heartbeat     = fs.Duration("heartbeat", d.Heartbeat, "keep-alive comment after this much silence on a stream")
		retryHint     = fs.Duration("retry", d.RetryHint, "reconnection delay hinted to SSE clients (retry: field)")
		grace         = fs.Duration("grace", d.Grace, "after a disconnect, keep generating this long waiting for a resume, then cancel upstream")
		retention     = fs.Duration("retention", d.Retention, "keep a finished stream resumable this long (in memory: at most twice --max-streams of them; in Redis: the keys' TTL)")
		writeTimeout  = fs.Duration("write-timeout", d.WriteTimeout, "cut a client whose single write takes longer (it may resume)")
		cutWait       = fs.Duration("cut-wait", d.CutWait, "after cutting a slow client, wait this long at most for it to read what was sent and hang up before its --grace starts")
		maxStreams    = fs.Int("max-streams", d.MaxStreams, "maximum generations running at once (then 429 with Retry-After)")
		maxBody       = fs.Int64("max-body", d.MaxBodyBytes, "maximum request body in bytes (then 413)")
		bodyTimeout   = fs.Duration("body-timeout", d.BodyTimeout, "how long a request's body may take to arrive (then 408), and a WebSocket's first message (then closed, 1008)")
		maxEvent      = fs.Int("max-event", d.MaxEventSize, "maximum bytes of one event's data (an upstream event over it fails the stream)")
		maxEvents     = fs.Int("max-events", d.MaxEvents, "maximum events in one stream (in Redis: the length cap of its log)")
		maxStreamB    = fs.Int("max-stream-bytes", d.MaxStreamBytes, "maximum bytes of one stream's log; a stream over it fails as one over --max-events does")
		authAudience  = fs.String("auth-audience", "", "with --auth-secret-env, accept only tokens whose aud claim holds this `NAME`; another gets 401 token_audience (default: aud not checked)")
		authIssuer    = fs.String("auth-issuer", "", "with --auth-secret-env, accept only tokens whose iss claim is this `NAME`; another gets 401 token_issuer (default: iss not checked)")
		maxRetained   = fs.Int64("max-retained-bytes", d.MaxRetainedBytes, "maximum bytes of every stream's log together, running and finished: past it the oldest finished streams are forgotten first; when the running ones fill it, new streams get 429 memory_full")
		maxConns      = fs.Int("max-conns-per-addr", d.MaxConnsPerAddr, "maximum connections one client address (IPv6: its /64) may hold open; over it 429 too_many_connections and the connection is closed (0: no cap, e.g. behind a reverse proxy)")
		authSecretEnv = fs.String("auth-secret-env", "", "accept only API requests carrying a short-lived JWT (HS256) signed with the secret in the environment variable `NAME`; its sub is the identity the limits count (trickle token mints one)")
		tokenEnv      = fs.String("token-env", "", "require clients to send this bearer token, read from the environment variable `NAME`")
		upstreamURL   = fs.String("upstream", "", "forward to this model API `URL` (full endpoint) instead of the simulated model")
		upDialect     = fs.String("upstream-dialect", "openai", "the upstream's format: "+stream.DialectNames(relay.UpstreamDialects()))
		upKeyEnv      = fs.String("upstream-key-env", "", "read the upstream API key from the environment variable `NAME` (it never leaves the server)")
		maxTokens     = fs.Int("max-tokens", 0, "refuse (400) a request asking for more output tokens than `N`, and send N as max_tokens when it names none (default: no cap)")
		allowFaults   = fs.Bool("allow-faults", false, "let the drop_after test fault cut a real upstream's stream too (without it, a request asking an --upstream relay for a fault gets 400)")
		maxInput      = fs.Int("max-input-chars", 0, "refuse (400) a request with more than `N` characters of text in all it sends the model: messages, tools, response_format, stop, user, names (default: no bound)")
		rateLimit     = fs.String("rate-limit", "", "let each client (the token's sub with --auth-secret-env, else its address) start this many generations per period, written `N/s`, N/min or N/h (e.g. 20/min); beyond it 429 rate_limited with Retry-After (default: no limit)")
		perClient     = fs.Int("max-streams-per-client", 0, "let each client have at most `N` generations running at once; beyond it 429 too_many_streams (default: no limit)")
		tokensPerDay  = fs.Int64("tokens-per-day", 0, "let each client generate at most `N` output tokens per UTC day; then 429 token_budget_exhausted until midnight UTC (default: no limit)")
		upModel       = fs.String("upstream-model", "", "model name to send upstream (default: the request's; a request naming none is refused)")
		firstToken    = fs.Duration("first-token-timeout", d.Upstream.FirstTokenTimeout, "fail an upstream answer whose first byte takes longer")
		idle          = fs.Duration("idle-timeout", d.Upstream.IdleTimeout, "fail an upstream answer silent for longer")
		total         = fs.Duration("total-timeout", d.Upstream.TotalTimeout, "fail an upstream answer that takes longer overall")
		retries       = fs.Int("upstream-retries", d.Upstream.Retries, "retries of an upstream request that failed before its first byte")
		simTTFT       = fs.Duration("sim-ttft", d.Sim.TTFT, "simulated model: default time to first token")
		simGap        = fs.Duration("sim-gap", d.Sim.Gap, "simulated model: default gap between tokens")
		simJitter     = fs.Duration("sim-jitter", d.Sim.Jitter, "simulated model: default jitter (±) of each delay")
		simTokenChars = fs.Int("sim-token-chars", d.Sim.TokenChars, "simulated model: default characters per token")
		shutdownWait  = fs.Duration("shutdown-timeout", 20*time.Second, "on SIGTERM, let streams finish this long before handing clients a resumable end")
		logFormat     = fs.String("log-format", "text", "log format: text or json")
		logLevel      = fs.String("log-level", "info", "log level: debug, info, warn or error")
		storeSpec     = fs.String("store", "memory", "where stream logs live: memory (this process only), or `redis://HOST:PORT/DB` to share them with every relay using that Redis (a fleet: any instance resumes and stops any stream)")
		lease         = fs.Duration("lease", d.Lease, "with --store redis: a stream whose relay has given no news for this long ends with an error for its readers elsewhere")
		writePath     = fs.String("write-path", string(relay.FastWrites), "how events reach clients' sockets: fast (hijacked connections, non-blocking writes) or plain (net/http's writer and coder/websocket's Conn.Write), for comparison")
		widgetDir     = fs.String("widget", "", "serve the widget from `DIR` (make dist's dist/trickle-answer, an unpacked trickle-answer package, or make build's assets/widget) instead of the one built into this binary")
		holdURL       = fs.String("hold-back-url", "", "hold each sentence of an answer until the checker at this `URL` clears it (POST {sentence, context, stream_id, request_id}, answered {\"allow\": true|false}); a blocked one ends the answer as withheld")
		holdTimeout   = fs.Duration("hold-back-timeout", 2*time.Second, "how long a sentence waits for the hold-back checker")
		holdOnError   = fs.String("hold-back-on-error", "block", "what a hold-back checker that fails or times out means: allow or block")
		holdSim       = fs.String("hold-back-sim", "", "the relay plays the hold-back checker itself: `block=WORD` blocks any sentence containing WORD (tests)")
		origins       listOption
		hosts         listOption
		models        listOption
	)
	fs.Var(&models, "models", "allow only these `MODELS` (comma-separated or repeated): a request naming another gets 400, one naming none gets the first (default: any)")
	fs.Var(&hosts, "allowed-host", "host `NAME` under which a relay without auth answers browsers besides localhost and IP addresses (a defence against DNS rebinding), repeatable or comma-separated")
	fs.Var(&origins, "allow-origin", "browser `ORIGIN` allowed to call the API and open the WebSocket (the widget's files are public to any page), repeatable or comma-separated; \"*\" for any (default: same origin only)")
	if inspectServeFlags != nil {
		inspectServeFlags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trickle serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "trickle serve: --log-level %q: %v\n", *logLevel, err)
		return 2
	}
	hopts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch *logFormat {
	case "json":
		logger = slog.New(slog.NewJSONHandler(stderr, hopts))
	case "text":
		logger = slog.New(slog.NewTextHandler(stderr, hopts))
	default:
		fmt.Fprintf(stderr, "trickle serve: --log-format %q: want text or json\n", *logFormat)
		return 2
	}

	widget := builtinWidget()
	if *widgetDir != "" {
		widget = os.DirFS(*widgetDir)
		if _, err := iofs.Stat(widget, "trickle.js"); err != nil {
			fmt.Fprintf(stderr, "trickle serve: --widget %s: no trickle.js there: give the folder make dist writes (dist/trickle-answer), an unpacked trickle-answer package or make build's assets/widget\n", *widgetDir)
			return 2
		}
	} else if _, err := iofs.Stat(widget, "trickle.js"); err != nil {
		logger.Warn(noWidget)
	}

	opts := []relay.Option{
		relay.WithLogger(logger),
		relay.WithWidget(widget),
		relay.WithMissingWidget(noWidget),
		relay.WithPages(examples.Pages()),
		relay.WithHeartbeat(*heartbeat),
		relay.WithRetryHint(*retryHint),
		relay.WithGrace(*grace),
		relay.WithRetention(*retention),
		relay.WithWriteTimeout(*writeTimeout),
		relay.WithCutWait(*cutWait),
		relay.WithMaxStreams(*maxStreams),
		relay.WithMaxBodyBytes(*maxBody),
		relay.WithBodyTimeout(*bodyTimeout),
		relay.WithMaxEventSize(*maxEvent),
		relay.WithMaxEvents(*maxEvents),
		relay.WithMaxStreamBytes(*maxStreamB),
		relay.WithMaxRetainedBytes(*maxRetained),
		relay.WithMaxConnsPerAddr(*maxConns),
		relay.WithAllowedOrigins(origins...),
		relay.WithAllowedHosts(hosts...),
		relay.WithOriginRefusal(func(e *relay.OriginError) string {
			return e.Error() + ": start the relay with --allow-origin " + e.Origin
		}),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: *simTTFT, Gap: *simGap, Jitter: *simJitter, TokenChars: *simTokenChars}),
		relay.WithLease(*lease),
		relay.WithWritePath(relay.WritePath(*writePath)),
	}
	storeName := "memory"
	switch {
	case *storeSpec == "memory":
	case strings.HasPrefix(*storeSpec, "redis://"), strings.HasPrefix(*storeSpec, "rediss://"):
		st, err := relay.RedisStore(*storeSpec)
		if err != nil {
			fmt.Fprintf(stderr, "trickle serve: %s\n", flagError(err))
			return 2
		}
		opts = append(opts, relay.WithStore(st))
		storeName = st.String() // the address without a password
	default:
		fmt.Fprintf(stderr, "trickle serve: --store %q: want memory or redis://HOST:PORT/DB\n", *storeSpec)
		return 2
	}
	if *tokenEnv != "" {
		tok := os.Getenv(*tokenEnv)
		if tok == "" {
			fmt.Fprintf(stderr, "trickle serve: --token-env %s: the variable is empty or unset\n", *tokenEnv)
			return 2
		}
		opts = append(opts, relay.WithToken(tok))
	}
	if isSet(fs, "models") {
		opts = append(opts, relay.WithModels(models...))
	}
	if isSet(fs, "max-tokens") {
		opts = append(opts, relay.WithMaxTokens(*maxTokens))
	}
	if isSet(fs, "max-input-chars") {
		opts = append(opts, relay.WithMaxInputChars(*maxInput))
	}
	if isSet(fs, "rate-limit") {
		r, err := relay.ParseRate(*rateLimit)
		if err != nil {
			fmt.Fprintf(stderr, "trickle serve: %s\n", flagError(err))
			return 2
		}
		opts = append(opts, relay.WithRateLimit(r))
	}
	if isSet(fs, "max-streams-per-client") {
		opts = append(opts, relay.WithMaxStreamsPerClient(*perClient))
	}
	if isSet(fs, "tokens-per-day") {
		opts = append(opts, relay.WithTokensPerDay(*tokensPerDay))
	}
	if *allowFaults {
		opts = append(opts, relay.WithAllowFaults(true))
	}
	if *authSecretEnv != "" {
		if *tokenEnv != "" {
			fmt.Fprintln(stderr, "trickle serve: --auth-secret-env and --token-env cannot both be set: a JWT per user (--auth-secret-env) replaces the shared token")
			return 2
		}
		secret := os.Getenv(*authSecretEnv)
		if secret == "" {
			fmt.Fprintf(stderr, "trickle serve: --auth-secret-env %s: the variable is empty or unset\n", *authSecretEnv)
			return 2
		}
		opts = append(opts, relay.WithAuthSecret([]byte(secret)))
	}
	if isSet(fs, "auth-audience") {
		opts = append(opts, relay.WithAuthAudience(*authAudience))
	}
	if isSet(fs, "auth-issuer") {
		opts = append(opts, relay.WithAuthIssuer(*authIssuer))
	}
	if *upstreamURL != "" {
		u := relay.Upstream{URL: *upstreamURL, Dialect: stream.Dialect(*upDialect), Model: *upModel,
			FirstTokenTimeout: *firstToken, IdleTimeout: *idle, TotalTimeout: *total, Retries: *retries}
		if *upKeyEnv != "" {
			if u.Key = os.Getenv(*upKeyEnv); u.Key == "" {
				fmt.Fprintf(stderr, "trickle serve: --upstream-key-env %s: the variable is empty or unset\n", *upKeyEnv)
				return 2
			}
		}
		opts = append(opts, relay.WithUpstream(u))
	}
	if *holdURL != "" || *holdSim != "" || isSet(fs, "hold-back-timeout") || isSet(fs, "hold-back-on-error") {
		opts = append(opts, relay.WithHoldBack(relay.HoldBack{URL: *holdURL, Timeout: *holdTimeout, OnError: *holdOnError, Sim: *holdSim}))
	}
	srv, err := relay.New(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "trickle serve: %s\n", flagError(err))
		return 2
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "trickle serve: %v\n", err)
		return 1
	}
	ln = srv.Listener(ln)
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	model := "simulated model"
	if *upstreamURL != "" {
		model = *upDialect + " upstream " + *upstreamURL
	}
	fmt.Fprintf(stdout, "trickle relay on http://%s/ (%s, store %s) — examples at http://%s/examples/\n", ln.Addr(), model, storeName, ln.Addr())
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "trickle serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	logger.Info("shutting down", "deadline", *shutdownWait)
	// Stop accepting at once (Shutdown closes the listener), and wait for
	// the connections while the relay lets its streams finish.
	hctx, hcancel := context.WithTimeout(context.Background(), *shutdownWait+5*time.Second)
	defer hcancel()
	hdone := make(chan error, 1)
	go func() { hdone <- hs.Shutdown(hctx) }()
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownWait)
	defer cancel()
	code := 0
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("relay shutdown", "err", err)
	}
	if err := <-hdone; err != nil {
		logger.Warn("http shutdown", "err", err)
		hs.Close()
		code = 1
	}
	<-errc
	return code
}

// inspectServeFlags, when set, is shown serve's flag set before it is
// parsed (a test reads the flags and their defaults).
var inspectServeFlags func(*flag.FlagSet)

// builtinWidget is the widget built into the binary (a test replaces it).
var builtinWidget = assets.Widget

// noWidget is what a trickle built without the widget says at start, and
// what /trickle/trickle.js answers (503).
const noWidget = "this trickle was built without the widget: run make build, or start it with --widget DIR"

// optionFlags names the flag that sets each relay option (and field).
var optionFlags = map[string]string{
	"WithHeartbeat":                  "heartbeat",
	"WithRetryHint":                  "retry",
	"WithGrace":                      "grace",
	"WithRetention":                  "retention",
	"WithWriteTimeout":               "write-timeout",
	"WithCutWait":                    "cut-wait",
	"WithMaxStreams":                 "max-streams",
	"WithMaxBodyBytes":               "max-body",
	"WithBodyTimeout":                "body-timeout",
	"WithMaxEventSize":               "max-event",
	"WithMaxEvents":                  "max-events",
	"WithMaxStreamBytes":             "max-stream-bytes",
	"WithMaxRetainedBytes":           "max-retained-bytes",
	"WithMaxConnsPerAddr":            "max-conns-per-addr",
	"WithLease":                      "lease",
	"WithSimDefaults.TTFT":           "sim-ttft",
	"WithSimDefaults.Gap":            "sim-gap",
	"WithSimDefaults.Jitter":         "sim-jitter",
	"WithSimDefaults.TokenChars":     "sim-token-chars",
	"WithUpstream.URL":               "upstream",
	"WithUpstream.Dialect":           "upstream-dialect",
	"WithUpstream.FirstTokenTimeout": "first-token-timeout",
	"WithUpstream.IdleTimeout":       "idle-timeout",
	"WithUpstream.TotalTimeout":      "total-timeout",
	"WithUpstream.Retries":           "upstream-retries",
	"RedisStore":                     "store",
	"WithAuthSecret":                 "auth-secret-env",
	"WithAuthAudience":               "auth-audience",
	"WithAuthIssuer":                 "auth-issuer",
	"WithModels":                     "models",
	"WithMaxTokens":                  "max-tokens",
	"WithMaxInputChars":              "max-input-chars",
	"ParseRate":                      "rate-limit",
	"WithRateLimit":                  "rate-limit",
	"WithMaxStreamsPerClient":        "max-streams-per-client",
	"WithTokensPerDay":               "tokens-per-day",
	"WithWritePath":                  "write-path",
	"WithHoldBack.URL":               "hold-back-url",
	"WithHoldBack.Timeout":           "hold-back-timeout",
	"WithHoldBack.OnError":           "hold-back-on-error",
	"WithHoldBack.Sim":               "hold-back-sim",
}

// flagError phrases a refused relay option as the flag that set it.
func flagError(err error) string {
	var oe *relay.OptionError
	if !errors.As(err, &oe) {
		return err.Error()
	}
	key := oe.Option
	if oe.Field != "" {
		key += "." + oe.Field
	}
	name, ok := optionFlags[key]
	if !ok {
		return err.Error()
	}
	return fmt.Sprintf("--%s %v: %s", name, oe.Value, oe.Reason)
}

// isSet reports whether the command line set the flag (its default means
// "off", any value given is checked by the relay).
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
