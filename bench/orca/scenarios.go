package main

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// A result is one scenario's timeline and verdict.
type result struct {
	name    string
	control bool      // the checks must catch it: it passes when they fail
	action  string    // what t0 is
	t0      time.Time // the reader's action that starts the answer
	mark    time.Time // a second action (Escape), if any
	marks   []mark    // the keys of a walk, in order
	notes   []string  // what the lab saw and reports, not an expectation
	before  []Utterance
	heard   []Heard
	written []written
	exp     []Expectation
}

// written is one thing the widget wrote into a live region, as a
// MutationObserver on the page saw it.
type written struct {
	T      float64 `json:"t"` // ms since the epoch
	Region string  `json:"region"`
	Text   string  `json:"text"`
}

// recorder notes every addition to an answer's log region and every
// status its status region takes, with the page's clock.
const recorder = `(() => {
  window.__written = [];
  if (window.__recording) return true;
  window.__recording = true;
  const region = (n) => n && (n.nodeType === 1 ? n : n.parentElement)?.closest?.('[data-trickle="announcer"], [data-trickle="sr-status"]');
  new MutationObserver((ms) => {
    for (const m of ms) {
      const r = region(m.target);
      if (!r) continue;
      if (r.dataset.trickle === "announcer") {
        for (const n of m.addedNodes) if (n.textContent.trim()) window.__written.push({t: Date.now(), region: "log", text: n.textContent});
      } else if (r.textContent.trim()) {
        window.__written.push({t: Date.now(), region: "status", text: r.textContent});
      }
    }
  }).observe(document.documentElement, {childList: true, subtree: true, characterData: true});
  return true;
})()`

// evalJS evaluates a JavaScript expression on the tab, awaiting the
// promise it returns, within d.
func evalJS[T any](ctx context.Context, d time.Duration, expr string) (T, error) {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// waitJS polls a JavaScript expression until it is truthy.
func waitJS(ctx context.Context, d time.Duration, expr string) error {
	deadline := time.Now().Add(d)
	for {
		ok, err := evalJS[bool](ctx, 10*time.Second, "!!("+expr+")")
		if err == nil && ok {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not true within %v (last error: %v)", expr, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func do(ctx context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Do(c, actions...)
}

// js is an action that runs statements on the page.
func js(statements string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool]("(async () => { "+statements+"; return true; })()", chromedp.EvalAwaitPromise)(ctx, t)
		return chromedp.Void{}, err
	}
}

// answerPage is the page with a <trickle-answer>, on the relay.
const answerPage = "/examples/answer/"

// open shows url in the tab, unless it shows it already (Chromium was
// started on it). The page navigates itself, as a link would: keyboard
// focus stays in the page.
func open(tab context.Context, url string) error {
	here, err := evalJS[string](tab, 10*time.Second, `location.href`)
	if err != nil {
		return err
	}
	if here == url {
		return nil
	}
	loaded := `location.href === ` + jsString(url) + ` && document.readyState === "complete"`
	// A navigation the page asks for while the browser's own is still
	// under way is dropped: ask again, three times at most.
	for try := 0; ; try++ {
		if err := do(tab, 10*time.Second, js(`location.href = `+jsString(url))); err != nil {
			return err
		}
		err := waitJS(tab, 20*time.Second, loaded)
		if err == nil || try == 2 {
			if err != nil {
				h, _ := evalJS[string](tab, 5*time.Second, `location.href + " " + document.readyState`)
				return fmt.Errorf("%w (the tab shows %s)", err, h)
			}
			return nil
		}
	}
}

// answerScenario: the answer page, the Ask button focused, then pressed.
func answerScenario(tab context.Context, lab *Lab, want Want) (*result, error) {
	if err := open(tab, lab.Relay+answerPage); err != nil {
		return nil, err
	}
	if err := waitJS(tab, 60*time.Second, `customElements.get("trickle-answer") && document.querySelector("#answer [data-trickle=announcer]")`); err != nil {
		return nil, err
	}
	if err := do(tab, 10*time.Second, js(recorder+";"), js(`document.querySelector("select[name=answer]").value = "short"; document.getElementById("go").focus()`)); err != nil {
		return nil, err
	}
	// What the page load and the focus make Orca say comes before.
	lab.WaitQuiet(tab, 2*time.Second, 30*time.Second)
	r := &result{name: "answer", action: "Enter pressed on the focused Ask button" + keysVia(lab), before: lab.OrcaSaid()}
	r.t0 = time.Now()
	if err := pressEnter(tab, lab); err != nil {
		return nil, err
	}
	if err := waitJS(tab, 5*time.Minute, `document.body.dataset.lastStatus`); err != nil {
		return nil, err
	}
	return finish(tab, lab, r, want)
}

// chatScenario: a <trickle-chat> on a page of its own; the composer
// focused, then for each message a turn: the message set by script,
// Enter pressed, the answer heard. Each turn is a result of its own; what
// must not be heard in it is every message sent so far.
func chatScenario(tab context.Context, lab *Lab, want Want, name, url string, messages []string) ([]*result, error) {
	if err := open(tab, url); err != nil {
		return nil, err
	}
	if err := waitJS(tab, 60*time.Second, `customElements.get("trickle-chat") && document.querySelector("[data-trickle-chat=input]")`); err != nil {
		return nil, err
	}
	if err := do(tab, 10*time.Second, js(recorder+";"), js(`document.querySelector("[data-trickle-chat=input]").focus()`)); err != nil {
		return nil, err
	}
	lab.WaitQuiet(tab, 2*time.Second, 30*time.Second)
	var out []*result
	for i, message := range messages {
		// The message goes in by script, not typed: Orca's echo of the
		// keys a reader types is theirs, not the widget's, and would hide
		// whether the sent message is read back.
		if err := do(tab, 10*time.Second, js(`document.querySelector("[data-trickle-chat=input]").value = `+jsString(message))); err != nil {
			return nil, err
		}
		lab.WaitQuiet(tab, 2*time.Second, 30*time.Second)
		r := &result{name: name, action: "Enter pressed in the composer, the message set by script" + keysVia(lab), before: lab.OrcaSaid()}
		if len(messages) > 1 {
			r.name = fmt.Sprintf("%s, turn %d", name, i+1)
		}
		r.t0 = time.Now()
		if err := pressEnter(tab, lab); err != nil {
			return nil, err
		}
		if err := waitJS(tab, 5*time.Minute, fmt.Sprintf(`(() => { const c = document.querySelector("trickle-chat"); return !c.busy && c.messages.filter((m) => m.role === "assistant").length >= %d; })()`, i+1)); err != nil {
			return nil, err
		}
		w := want
		w.Own = messages[:i+1]
		r, err := finish(tab, lab, r, w)
		if err != nil {
			return nil, err
		}
		// What must not be read back was sent and is on the page, and the
		// reader is still in the composer.
		state, err := evalJS[turnState](tab, 10*time.Second, fmt.Sprintf(`(() => {
			const c = document.querySelector("trickle-chat"), m = %s;
			const users = c.messages.filter((x) => x.role === "user");
			return {
				shown: users[%d]?.content === m && [...c.querySelectorAll('[data-trickle-chat="turn"][data-role="user"]')].some((t) => t.textContent.includes(m)),
				focused: document.activeElement === c.querySelector("[data-trickle-chat=input]"),
			};
		})()`, jsString(message), i))
		if err != nil {
			return nil, err
		}
		r.exp = append(r.exp,
			Expectation{Name: "the message was sent and shown in the thread", OK: state.Shown,
				Why: map[bool]string{true: "chat.messages and a user turn hold it", false: "not in chat.messages or not on the page"}[state.Shown]},
			Expectation{Name: "focus stays in the composer", OK: state.Focused,
				Why: map[bool]string{true: "the textarea has the focus after the answer", false: "document.activeElement is not the textarea"}[state.Focused]})
		out = append(out, r)
	}
	return out, nil
}

// turnState is what the page says after a chat turn.
type turnState struct {
	Shown   bool `json:"shown"`   // the message is in chat.messages and on the page
	Focused bool `json:"focused"` // the composer has the focus
}

// pressEnter presses Enter as the reader's keyboard does when xdotool is
// there (Orca hears the key, as it hears a reader's), else through the
// DevTools protocol (the page gets it, Orca does not).
func pressEnter(tab context.Context, lab *Lab) error {
	return pressKey(tab, lab, "Return")
}

// pressKey presses Return or Escape, the same two ways.
func pressKey(tab context.Context, lab *Lab, key string) error {
	if lab.HasXKeys() {
		return lab.PressX(key)
	}
	k := map[string]string{"Return": kb.Enter, "Escape": kb.Escape}[key]
	return do(tab, 10*time.Second, chromedp.KeyEvent(k))
}

func keysVia(lab *Lab) string {
	if lab.HasXKeys() {
		return " (an X key press, xdotool)"
	}
	return " (sent to the page by DevTools: no xdotool)"
}

// finish waits for Orca to say an end status (the widget has ended; Orca
// speaks what it was given in its own time), then for 3 s of quiet, so a
// late duplicate would be heard, and checks the timeline.
func finish(tab context.Context, lab *Lab, r *result, want Want) (*result, error) {
	return finishWith(tab, lab, r, func([]written) Want { return want })
}

// finishWith is finish with what to expect made from what the widget
// wrote since the action (a stopped answer's sentences are known only
// then).
func finishWith(tab context.Context, lab *Lab, r *result, want func([]written) Want) (*result, error) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && tab.Err() == nil && !saidEnd(lab.OrcaSaid(), r.t0) {
		time.Sleep(100 * time.Millisecond)
	}
	lab.WaitQuiet(tab, 3*time.Second, 60*time.Second)
	var after []Utterance
	for _, u := range lab.OrcaSaid() {
		if !u.At.Before(r.t0) {
			after = append(after, u)
		}
	}
	r.before = r.before[len(r.before)-min(len(r.before), 6):]
	w, err := evalJS[[]written](tab, 10*time.Second, `window.__written ?? []`)
	if err != nil {
		return nil, err
	}
	for _, x := range w {
		if x.T >= float64(r.t0.UnixMilli()) {
			r.written = append(r.written, x)
		}
	}
	expect := want(r.written)
	expect.Keys = append(expect.Keys, r.t0) // the reader's keys
	if !r.mark.IsZero() {
		expect.Keys = append(expect.Keys, r.mark)
	}
	r.heard, r.exp = Classify(after, expect)
	return r, nil
}

func saidEnd(said []Utterance, since time.Time) bool {
	for _, u := range said {
		if !u.At.Before(since) && isEnd(norm(u.Text)) {
			return true
		}
	}
	return false
}

// failed counts what went wrong: an expectation that failed, or, for a
// control, checks that caught nothing. In the control Orca reads the
// answer's fragments every time; whether it also reads the reader's
// message depends on how it takes in the new turn (seen both ways), so
// either check failing is the control caught.
func (r *result) failed() int {
	n := 0
	for _, e := range r.exp {
		if !e.OK {
			n++
		}
	}
	if !r.control {
		return n
	}
	var caught []string
	for _, e := range r.exp {
		if !e.OK && (e.Name == expOwn || e.Name == expSentences) {
			caught = append(caught, e.Name)
		}
	}
	if len(caught) == 0 {
		fmt.Println("  CONTROL NOT CAUGHT  neither the read-back nor the sentence check failed on the page's own live region")
		return 1
	}
	fmt.Printf("  CONTROL CAUGHT  on the page's own live region: %s\n", strings.Join(caught, "; "))
	return 0
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\n== %s: %s at %s UTC\n", r.name, r.action, r.t0.UTC().Format("15:04:05.000"))
	fmt.Fprintln(w, "Orca, just before:")
	for _, u := range r.before {
		if !u.Interrupt {
			fmt.Fprintf(w, "  %+8.3fs  %-14s %q\n", u.At.Sub(r.t0).Seconds(), "(before)", u.Text)
		}
	}
	fmt.Fprintln(w, "Orca said:")
	marks := slices.Clone(r.marks)
	if !r.mark.IsZero() {
		marks = append(marks, mark{r.mark, "Escape"})
	}
	slices.SortStableFunc(marks, func(a, b mark) int { return a.at.Compare(b.at) })
	for _, h := range r.heard {
		for len(marks) > 0 && !h.At.Before(marks[0].at) {
			fmt.Fprintf(w, "  %+8.3fs  %-14s\n", marks[0].at.Sub(r.t0).Seconds(), "["+marks[0].name+" pressed]")
			marks = marks[1:]
		}
		text := fmt.Sprintf("%q", h.Text)
		if h.Interrupt {
			text = "(Orca interrupts its speech)"
		}
		kind := string(h.Kind)
		if h.Units > 1 {
			kind = fmt.Sprintf("%s ×%d", kind, h.Units)
		}
		fmt.Fprintf(w, "  %+8.3fs  %-14s %s\n", h.At.Sub(r.t0).Seconds(), kind, text)
	}
	fmt.Fprintln(w, "The widget wrote (its live regions):")
	for _, x := range r.written {
		at := time.UnixMilli(int64(x.T)).Sub(r.t0).Seconds()
		fmt.Fprintf(w, "  %+8.3fs  %-14s %q\n", at, x.Region, x.Text)
	}
	if r.control {
		fmt.Fprintln(w, "Expectations (a control: the answer's fragments or the read-back must be caught):")
	} else {
		fmt.Fprintln(w, "Expectations:")
	}
	for _, e := range r.exp {
		v := "PASS"
		if !e.OK {
			v = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", v, e.Name, e.Why)
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "  NOTE  %s\n", n)
	}
}

// chatPage serves /chat/: a page of its own origin with one <trickle-chat>
// whose script and API are the relay's, as a site embeds it. /chat/?live
// is the control: the same chat inside a page's own aria-live region, as
// a naive page would put a thread, where Orca reads everything added.
func chatPage(relay string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/chat/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_ = chatTemplate.Execute(w, struct {
			Relay, Query string
			Live         bool
		}{relay, simQuery, r.URL.Query().Has("live")})
	})
	return mux
}

var chatTemplate = template.Must(template.New("chat").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Chat · Orca lab</title>
<script type="module" src="{{.Relay}}/trickle/trickle.js"></script>
</head>
<body>
<main>
<h1>Chat</h1>
{{if .Live}}<div aria-live="polite">{{end}}<trickle-chat endpoint="{{.Relay}}/v1/chat/completions?{{.Query}}"></trickle-chat>{{if .Live}}</div>{{end}}
</main>
</body>
</html>
`))

func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
