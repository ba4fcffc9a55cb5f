package holdback

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/trickle-dev/trickle/relay/internal/admit"
)

// DefaultTimeout is how long a sentence waits for the checker by default.
const DefaultTimeout = 2 * time.Second

// What a checker that fails or times out means (Settings.OnError).
const (
	OnErrorBlock = "block" // the default: the answer is withheld
	OnErrorAllow = "allow" // the sentence goes out
)

// Settings are what the relay's operator sets (relay.WithHoldBack): one
// checker, its URL or the simulated one.
type Settings struct {
	// URL is the checker's endpoint: each sentence is POSTed to it as a
	// Request, and it answers {"allow": true|false}.
	URL string
	// Timeout bounds each check (0: DefaultTimeout).
	Timeout time.Duration
	// OnError is OnErrorBlock ("" too) or OnErrorAllow.
	OnError string
	// Sim, "block=WORD", makes the relay itself the checker, without
	// HTTP: any sentence containing WORD, in any case, is blocked.
	Sim string
	// Client makes the requests to URL (nil: a client of its own).
	Client *http.Client
}

// FieldError names the field of Settings that cannot work.
type FieldError struct {
	Field  string
	Value  any
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("holdback: %s %v: %s", e.Field, e.Value, e.Reason)
}

// Verdict is how a check ended, as /metrics counts it.
type Verdict string

// The verdicts.
const (
	VerdictAllow Verdict = "allow"
	VerdictBlock Verdict = "block"
	VerdictError Verdict = "error"
)

// Gates make the gates of one server's streams: one checker, its settings
// and where the verdicts are counted.
type Gates struct {
	checker      Checker
	timeout      time.Duration
	allowOnError bool
	observe      func(verdict string, wait time.Duration)
	log          *slog.Logger
}

// New checks s and makes the Gates; observe (may be nil) is told each
// check's verdict and how long the sentence waited for it.
func New(s Settings, observe func(verdict string, wait time.Duration), log *slog.Logger) (*Gates, error) {
	g := &Gates{timeout: s.Timeout, observe: observe, log: log}
	if g.observe == nil {
		g.observe = func(string, time.Duration) {}
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	switch {
	case s.Timeout < 0:
		return nil, &FieldError{"Timeout", s.Timeout, "the duration must be positive"}
	case s.Timeout == 0:
		g.timeout = DefaultTimeout
	}
	switch s.OnError {
	case "", OnErrorBlock:
	case OnErrorAllow:
		g.allowOnError = true
	default:
		return nil, &FieldError{"OnError", fmt.Sprintf("%q", s.OnError), "want allow or block"}
	}
	switch {
	case s.URL != "" && s.Sim != "":
		return nil, &FieldError{"Sim", fmt.Sprintf("%q", s.Sim), "set a checker URL or the simulated checker, not both"}
	case s.Sim != "":
		word, ok := strings.CutPrefix(s.Sim, "block=")
		if word = strings.ToLower(strings.TrimSpace(word)); !ok || word == "" {
			return nil, &FieldError{"Sim", fmt.Sprintf("%q", s.Sim), "want block=WORD"}
		}
		g.checker = wordChecker{word}
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &FieldError{"URL", fmt.Sprintf("%q", s.URL), "want an absolute http:// or https:// URL"}
		}
		c := s.Client
		if c == nil {
			c = &http.Client{}
		}
		g.checker = &httpChecker{url: s.URL, client: c}
	default:
		return nil, &FieldError{"URL", `""`, "hold-back needs a checker: a URL or the simulated one (Sim)"}
	}
	return g, nil
}

// StreamRequired is the code of the refusal of a request for an answer in
// one piece (Admit).
const StreamRequired = wire.CodeStreamRequired

// Admit refuses a request that does not stream its answer: one sent in
// one piece cannot be held back sentence by sentence, and must not get
// past the checker (nil Gates admit every request).
func (g *Gates) Admit(stream bool) error {
	if g == nil || stream {
		return nil
	}
	return &admit.Refusal{Code: StreamRequired, Param: "stream",
		Message: `this relay checks each sentence of an answer before it is sent (hold-back): ask with "stream": true`}
}
