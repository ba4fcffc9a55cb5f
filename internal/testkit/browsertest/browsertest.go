// Package browsertest starts a real headless Chromium for tests, through
// chromedp, with the flags every Trickle browser test shares (no sandbox, no
// GPU, no QUIC, no background traffic) and a fresh profile per browser,
// and a plain backend for pages that stream from their own (OpenAIAnswer).
//
// It never downloads a browser and never runs one with a visible window.
// Without Chromium the calling test is skipped with a message saying how to
// install it — unless CI=true, where a missing browser fails the test: the
// browser tests must run in CI.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ErrNoChromium means no Chromium executable was found.
var ErrNoChromium = errors.New("browsertest: no chromium executable found (install it: apt-get install -y chromium, or set TRICKLE_CHROMIUM)")

// candidates are tried in order after $TRICKLE_CHROMIUM. /usr/bin/chromium
// is what Debian's chromium package installs and what CI uses.
var candidates = []string{
	"/usr/bin/chromium",
	"chromium",
	"chromium-browser",
	"google-chrome",
	"google-chrome-stable",
	"headless-shell",
}

// Find returns the path of the Chromium executable to run: $TRICKLE_CHROMIUM
// when set, else the first of /usr/bin/chromium, chromium, chromium-browser,
// google-chrome… found. It returns ErrNoChromium when none exists.
func Find() (string, error) {
	if p := os.Getenv("TRICKLE_CHROMIUM"); p != "" {
		full, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("browsertest: TRICKLE_CHROMIUM=%q: %w", p, err)
		}
		return full, nil
	}
	for _, c := range candidates {
		if full, err := exec.LookPath(c); err == nil {
			return full, nil
		}
	}
	return "", ErrNoChromium
}

// Flags are the command-line switches every browser gets, besides
// --user-data-dir. They keep the browser quiet (no update checks, sync or
// component downloads, which would show up in network assertions), make it
// run as root in containers (--no-sandbox), and keep HTTP on TCP
// (--disable-quic) so loopback servers see what real clients send.
var Flags = []string{
	"headless",
	"no-sandbox",
	"disable-gpu",
	"disable-quic",
	"no-first-run",
	"no-default-browser-check",
	"disable-background-networking",
	"disable-component-update",
	"disable-sync",
	"disable-dev-shm-usage",
	"disable-extensions",
	"disable-default-apps",
	"mute-audio",
	"hide-scrollbars",
}

type config struct {
	width, height int
	extra         map[string]any
	logf          func(string, ...any)
}

// Option configures a browser.
type Option func(*config)

// WithWindowSize sets the viewport size in CSS pixels (default 1024×768).
func WithWindowSize(w, h int) Option {
	return func(c *config) { c.width, c.height = w, h }
}

// WithFlag adds or overrides one command-line switch (value true for a bare
// switch, false to remove one of Flags).
func WithFlag(name string, value any) Option {
	return func(c *config) { c.extra[name] = value }
}

// WithLogf receives chromedp's log and error messages (default: dropped; the
// browser's own console is the test's business).
func WithLogf(f func(string, ...any)) Option {
	return func(c *config) { c.logf = f }
}

// Launch starts a headless Chromium at execPath with Flags and the given
// profile directory, and returns a chromedp context bound to its first tab.
// The browser runs until cancel is called; cancel waits for it to exit.
// Launch does not open the tab itself: the first chromedp.Run does (Start
// does that for you). Most tests want New instead.
func Launch(parent context.Context, execPath, userDataDir string, opts ...Option) (context.Context, context.CancelFunc) {
	cfg := config{width: 1024, height: 768, extra: map[string]any{}}
	for _, o := range opts {
		o(&cfg)
	}
	allocOpts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(cfg.width, cfg.height),
	}
	for _, f := range Flags {
		if v, ok := cfg.extra[f]; ok && v == false {
			continue
		}
		allocOpts = append(allocOpts, chromedp.Flag(f, true))
	}
	for name, v := range cfg.extra {
		if v == false {
			continue
		}
		allocOpts = append(allocOpts, chromedp.Flag(name, v))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, allocOpts...)
	var ctxOpts []chromedp.ContextOption
	if cfg.logf != nil {
		ctxOpts = append(ctxOpts, chromedp.WithLogf(cfg.logf), chromedp.WithErrorf(cfg.logf))
	} else {
		quiet := func(string, ...any) {}
		ctxOpts = append(ctxOpts, chromedp.WithLogf(quiet), chromedp.WithErrorf(quiet))
	}
	ctx, cancelCtx := chromedp.NewContext(allocCtx, ctxOpts...)
	return ctx, func() {
		cancelCtx()
		cancelAlloc()
	}
}

// Available reports whether a browser test can run here. When it cannot, it
// skips t with a message — or, under CI=true, fails it, because CI must run
// the browser tests.
func Available(t testing.TB) string {
	t.Helper()
	path, err := Find()
	if err == nil {
		return path
	}
	if strings.EqualFold(os.Getenv("CI"), "true") {
		t.Fatalf("%v; CI=true, so browser tests must run", err)
		return ""
	}
	t.Skipf("skipping browser test: %v", err)
	return ""
}

// New starts a headless Chromium for the test with a fresh profile in
// t.TempDir() and returns a chromedp context bound to its first tab, already
// open. The browser is stopped when the test ends. Use Tab for more tabs of
// the same browser (cheaper than a new browser: ~10 ms against ~500 ms).
func New(t testing.TB, opts ...Option) context.Context {
	t.Helper()
	path := Available(t)
	ctx, cancel := Launch(context.Background(), path, t.TempDir(), opts...)
	t.Cleanup(cancel)
	// The first Run starts the browser; it must not carry a timeout (that
	// would stop the browser when it fires), so bound it from outside.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("browsertest: starting %s: %v", path, err)
		}
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("browsertest: %s did not start within 60s", path)
	}
	return ctx
}

// Tab opens a new tab in the browser of ctx (a context from New or Tab) and
// closes it when the test ends.
func Tab(t testing.TB, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: opening a tab: %v", err)
	}
	return ctx
}

// Timeout derives a context that ends after d, for a bounded group of
// actions on a tab that is already open. It is canceled when the test ends.
func Timeout(t testing.TB, tab context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tab, d)
	t.Cleanup(cancel)
	return ctx
}

// Eval evaluates a JavaScript expression on the tab of ctx, awaiting the
// promise it returns if it returns one, and decodes its value into T. An
// error (a thrown exception, a value that does not decode) fails t. Bound
// ctx (Timeout) to bound the wait.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browsertest: evaluating %s: %v", expr, err)
	}
	return v
}

// WaitFor evaluates a JavaScript expression on the tab of ctx every 25 ms
// until it is truthy, and fails t when it is not within d.
func WaitFor(t testing.TB, ctx context.Context, d time.Duration, expr string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !Eval[bool](t, ctx, "!!("+expr+")") {
		if time.Now().After(deadline) {
			t.Fatalf("browsertest: %s was not true within %v", expr, d)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// WaitAcross is WaitFor while the tab navigates: an evaluation that the
// navigation cut (the document it ran in went away) is tried again rather
// than failing t.
func WaitAcross(t testing.TB, ctx context.Context, d time.Duration, expr string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")", chromedp.EvalAwaitPromise))
		switch {
		case err == nil && ok:
			return
		case err != nil && !navigating(err):
			t.Fatalf("browsertest: evaluating %s: %v", expr, err)
		case time.Now().After(deadline):
			t.Fatalf("browsertest: %s was not true within %v (last error: %v)", expr, d, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// navigating reports whether err is an evaluation lost to a navigation.
func navigating(err error) bool {
	msg := err.Error()
	for _, s := range []string{"navigated or closed", "Execution context was destroyed", "Cannot find context with specified id", "Cannot find default execution context"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// JSString quotes s as a JavaScript string literal, for building an
// expression from Go values.
func JSString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}
