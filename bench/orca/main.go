// Command orca is the lab check with a real screen reader: it runs Orca
// on a private X display (Xvfb) and session bus, with the AT-SPI bus and
// speech-dispatcher's dummy output module (nothing is played; Orca's debug
// log records every utterance it sends), opens Chromium with a window and
// accessibility on, and records what Orca says while the widget streams an
// answer:
//
//   - answer: the answer page (/examples/answer/), Ask pressed;
//   - chat: a page of its own, on another origin, with a <trickle-chat>
//     loaded from the relay; the reader's message is put in the composer
//     by script (so no typing echo can speak it) and Enter pressed, two
//     turns;
//   - stop: a new chat, Escape pressed once Orca has said two sentences;
//   - control: the same chat inside the page's own aria-live region, as a
//     naive page would hold a thread: Orca reads the reader's message and
//     the answer's raw fragments there, and the checks must say so (the
//     control passes when they fail);
//   - walk: a new chat showing a stored six-turn thread (chat.messages,
//     no request); Shift+Tab from the composer to the newest turn, Orca+A
//     twice (Orca's sticky focus mode, so that the arrows reach the
//     page), then ArrowUp to the first turn, ArrowDown to the last, Home,
//     End and Escape, each a real key press. Orca must say each focused
//     turn's label ("You said, 5 of 6"), then its text, and nothing of
//     another turn, and after Escape the composer's name, with the focus
//     there (document.activeElement after each key);
//   - walk-browse: the same thread without Orca+A,
//     in the browse mode Orca is in on a turn, where the arrows, Home and
//     End are Orca's own: walked with the keys Orca leaves to the page
//     there (the feed pattern's Page Up to the first turn, Page Down to
//     the last), then Escape, with the same checks, and Orca must not
//     have switched to focus mode before the Escape.
//
// Every scenario runs twice (-arianotify on,off): with the browser's
// ariaNotify, then with it removed before the page's scripts run, so the
// widget speaks through its live regions; each result also checks which
// way the page spoke.
//
// For each it prints the spoken timeline and checks it: one start status
// before anything of the answer, each of the answer's sentences heard
// once, whole and in order (the sentences are the ones `trickle replay`
// finds in the same stream; for a stopped answer, the ones the widget
// wrote), the end status once, after the last sentence, no interruption
// but at the reader's keys, and, for the chat, no message of the reader's
// read back and the focus still in the composer. It exits 1 when an
// expectation fails, 2 when the lab could not run.
//
// Run it with `make orca` (bench/orca/lab.sh: it builds the relay and the
// widget first). Every process it starts runs in its own process group and
// is ended by its id when it returns, failed or not.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

func main() {
	os.Exit(run())
}

type options struct {
	trickle, chromium string
	scenarios         string
	ariaNotify        string
	message, message2 string
	keep, verbose     bool
}

func run() int {
	var o options
	flag.StringVar(&o.trickle, "trickle", "bin/trickle", "the relay binary (make build)")
	flag.StringVar(&o.chromium, "chromium", firstNonEmpty(os.Getenv("TRICKLE_CHROMIUM"), "/usr/bin/chromium"), "the Chromium to run")
	flag.StringVar(&o.scenarios, "scenarios", "answer,chat,stop,control,walk,walk-browse", "the scenarios to run, comma-separated: answer, chat, stop, control (the chat in the page's own live region: the checks must fail), walk (a stored thread walked by keyboard, in Orca's focus mode), walk-browse (the thread walked in Orca's browse mode with Page Up and Page Down)")
	flag.StringVar(&o.ariaNotify, "arianotify", "on,off", "run the scenarios with the browser's ariaNotify (on), with it removed before the page's scripts run (off: the live regions speak), or both, in that order")
	flag.StringVar(&o.message, "message", "My parrot Zephyr wonders how you work.", "the reader's first message in the chat scenario (and the control's)")
	flag.StringVar(&o.message2, "message2", "Tell Zephyr a parrot joke, please.", "the reader's second message in the chat scenario")
	flag.BoolVar(&o.keep, "keep", false, "keep the run's directory (Orca's debug log, every program's log)")
	flag.BoolVar(&o.verbose, "v", false, "say what the lab starts and ends")
	flag.Parse()
	if abs, err := filepath.Abs(o.trickle); err == nil {
		o.trickle = abs // the lab's programs run in its own directory
	}

	logf := func(format string, args ...any) {
		if o.verbose {
			fmt.Fprintf(os.Stderr, "orca-lab: "+format+"\n", args...)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lab, err := NewLab(o.keep, logf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "orca-lab:", err)
		return 2
	}
	defer lab.Close()

	results, err := runLab(ctx, lab, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "orca-lab: the lab could not run:", err)
		fmt.Fprintln(os.Stderr, "orca-lab: run again with -keep -v to keep every program's log")
		return 2
	}
	fmt.Printf("Orca lab, %s: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.Join(versions(o), ", "))
	failed := 0
	for _, r := range results {
		r.print(os.Stdout)
		failed += r.failed()
	}
	if failed > 0 {
		fmt.Printf("\nFAIL: %d expectation(s) not met\n", failed)
		return 1
	}
	fmt.Println("\nPASS: every expectation met")
	return 0
}

// versions names what the run used: Orca, Chromium, speech-dispatcher.
func versions(o options) []string {
	var out []string
	for _, c := range [][]string{{"orca", "--version"}, {o.chromium, "--version"}, {"speech-dispatcher", "--version"}} {
		b, err := exec.Command(c[0], c[1:]...).Output()
		if err != nil {
			continue
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		if c[0] == "orca" {
			line = "Orca " + line
		}
		out = append(out, strings.TrimSpace(line))
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// runLab brings the session up, then runs the scenarios in one browser.
func runLab(ctx context.Context, lab *Lab, o options) ([]*result, error) {
	for _, tool := range []string{"Xvfb", "dbus-daemon", "dbus-send", "speech-dispatcher", "orca", o.chromium, o.trickle} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found (apt-get install orca at-spi2-core dbus-daemon dbus-bin xvfb speech-dispatcher chromium; make build for bin/trickle): %w", tool, err)
		}
	}
	// The chat page's own origin, on another port than the relay's.
	pageLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	pageOrigin := "http://" + pageLn.Addr().String()
	steps := []struct {
		name string
		do   func() error
	}{
		{"Xvfb", lab.Xvfb},
		{"session bus", lab.SessionBus},
		{"AT-SPI bus", lab.ATSPI},
		{"speech-dispatcher", lab.Speech},
		{"Orca", lab.Orca},
		{"relay", func() error { return lab.StartRelay(o.trickle, pageOrigin) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			pageLn.Close()
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	pages := &http.Server{Handler: chatPage(lab.Relay), ReadHeaderTimeout: 10 * time.Second}
	go pages.Serve(pageLn)
	defer pages.Close()

	want, err := expected(lab, o.trickle)
	if err != nil {
		return nil, fmt.Errorf("the answer's sentences (trickle replay): %w", err)
	}

	ws, err := lab.Chromium(o.chromium, lab.Relay+answerPage)
	if err != nil {
		return nil, err
	}
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, ws)
	defer cancelAlloc()
	// chromedp's own log (events it did not expect from a browser it did
	// not start) is noise here, unless -v.
	quiet := func(string, ...any) {}
	if o.verbose {
		quiet = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "chromedp: "+f+"\n", a...) }
	}
	browser, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(quiet), chromedp.WithErrorf(quiet))
	defer cancelBrowser()
	// The window's first tab, the one on screen (a new target would open
	// a tab of its own).
	var tabID target.ID
	for deadline := time.Now().Add(20 * time.Second); tabID == "" && time.Now().Before(deadline); {
		targets, err := chromedp.Targets(browser)
		if err != nil {
			return nil, fmt.Errorf("chromium's targets: %w", err)
		}
		for _, t := range targets {
			if t.Type == "page" {
				tabID = t.TargetID
				break
			}
		}
		if tabID == "" {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if tabID == "" {
		return nil, errors.New("chromium shows no page")
	}
	tab, cancelTab := chromedp.NewContext(browser, chromedp.WithTargetID(tabID))
	defer cancelTab()
	if err := chromedp.Do(tab); err != nil {
		return nil, fmt.Errorf("attaching to chromium's tab: %w", err)
	}
	// The first page (on Chromium's command line) loads before anything
	// else is asked of the tab.
	if err := waitJS(tab, 60*time.Second, `location.href === `+jsString(lab.Relay+answerPage)+` && document.readyState === "complete"`); err != nil {
		return nil, fmt.Errorf("chromium's first page: %w", err)
	}

	var results []*result
	var hidden page.ScriptIdentifier // the script that removes ariaNotify, while it is added
	for _, mode := range strings.Split(o.ariaNotify, ",") {
		mode = strings.TrimSpace(mode)
		switch {
		case mode == "off" && hidden == "":
			added, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: removeAriaNotify})
			if err != nil {
				return nil, fmt.Errorf("removing ariaNotify: %w", err)
			}
			hidden = added.Identifier
		case mode == "on" && hidden != "":
			if _, err := chromedp.Call(tab, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: hidden}); err != nil {
				return nil, fmt.Errorf("putting ariaNotify back: %w", err)
			}
			hidden = ""
		case mode != "on" && mode != "off":
			return nil, fmt.Errorf("-arianotify: %q is neither on nor off", mode)
		}
		// The page as it stands was loaded in the other mode: load it again.
		if err := do(tab, 10*time.Second, js(`location.reload()`)); err != nil {
			return nil, err
		}
		if err := waitJS(tab, 60*time.Second, `document.readyState === "complete" && (typeof Element.prototype.ariaNotify === "function") === `+fmt.Sprint(mode == "on")); err != nil {
			return nil, fmt.Errorf("ariaNotify %s: %w", mode, err)
		}
		rs, err := runScenarios(tab, lab, o, want, pageOrigin, mode)
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
	}
	return results, nil
}

// removeAriaNotify runs before any script of every page in the off mode:
// the widget finds no ariaNotify and speaks through its live regions.
const removeAriaNotify = `delete Element.prototype.ariaNotify; delete Document.prototype.ariaNotify;`

// runScenarios runs the scenarios in the tab, in one ariaNotify mode
// ("on" or "off"), and adds to each result whether the page had
// ariaNotify and which way the widget spoke.
func runScenarios(tab context.Context, lab *Lab, o options, want Want, pageOrigin, mode string) ([]*result, error) {
	var results []*result
	var err error
	for _, name := range strings.Split(o.scenarios, ",") {
		var rs []*result
		switch strings.TrimSpace(name) {
		case "answer":
			var r *result
			r, err = answerScenario(tab, lab, want)
			rs = []*result{r}
		case "chat":
			rs, err = chatScenario(tab, lab, want, "chat", pageOrigin+"/chat/", []string{o.message, o.message2})
		case "control":
			rs, err = chatScenario(tab, lab, want, "control", pageOrigin+"/chat/?live", []string{o.message})
			for _, r := range rs {
				r.control = true
			}
		case "stop":
			var r *result
			r, err = stopScenario(tab, lab, want, pageOrigin+"/chat/?stop", o.message) // a new chat
			rs = []*result{r}
		case "walk":
			var r *result
			r, err = walkScenario(tab, lab, pageOrigin+"/chat/?walk", true) // a new chat
			rs = []*result{r}
		case "walk-browse":
			var r *result
			r, err = walkScenario(tab, lab, pageOrigin+"/chat/?walk-browse", false)
			rs = []*result{r}
		default:
			return nil, fmt.Errorf("no scenario %q (answer, chat, stop, control, walk, walk-browse)", name)
		}
		if err != nil {
			return nil, fmt.Errorf("scenario %s (ariaNotify %s): %w", name, mode, err)
		}
		// Which way the page spoke: ariaNotify takes the live roles off
		// the answers' regions (wasm/web/notify.js).
		way, err := evalJS[pathState](tab, 10*time.Second, `(() => {
			const a = [...document.querySelectorAll("[data-trickle=announcer]")].at(-1);
			return { has: typeof Element.prototype.ariaNotify === "function", live: a ? a.hasAttribute("aria-live") : null };
		})()`)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			r.name += " [ariaNotify " + mode + "]"
			ok := way.Has == (mode == "on") && (way.Live == nil || *way.Live == (mode == "off"))
			why := fmt.Sprintf("the page has ariaNotify: %v", way.Has)
			if way.Live != nil {
				why += fmt.Sprintf("; the answers' log region is aria-live: %v", *way.Live)
			}
			r.exp = append(r.exp, Expectation{Name: "the page speaks through " + map[string]string{"on": "ariaNotify", "off": "its live regions"}[mode], OK: ok, Why: why})
		}
		results = append(results, rs...)
	}
	return results, nil
}

// pathState is what the page has to speak with.
type pathState struct {
	Has  bool  `json:"has"`  // Element.prototype.ariaNotify is a function
	Live *bool `json:"live"` // the newest answer's log region is aria-live (null: no answer)
}

// simQuery is the canned answer both scenarios stream, at the simulated
// model's default pace.
const simQuery = "answer=short"

// expected asks the relay for the same canned answer at once and lets
// `trickle replay` say what a reader hears of it: at one token a second
// (on its simulated clock) every sentence is its own announcement, so the
// list is the answer's sentences, whatever merging the live run does.
func expected(lab *Lab, bin string) (Want, error) {
	body := `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(lab.Relay+"/v1/chat/completions?"+simQuery+"&ttft_ms=0&gap_ms=0&jitter_ms=0", "application/json", strings.NewReader(body))
	if err != nil {
		return Want{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Want{}, err
	}
	file := lab.path("logs/answer.sse")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return Want{}, err
	}
	out, err := exec.Command(bin, "replay", "--pace", "1", file).Output()
	if err != nil {
		return Want{}, fmt.Errorf("%s replay: %w", bin, err)
	}
	var rep struct {
		Status        string `json:"status"`
		Announcements []struct {
			Text   string `json:"text"`
			Status bool   `json:"status"`
		} `json:"announcements"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return Want{}, err
	}
	var w Want
	for _, a := range rep.Announcements {
		switch {
		case a.Status && w.Start == "":
			w.Start = a.Text
		case a.Status:
			w.End = a.Text
		default:
			w.Units = append(w.Units, a.Text)
		}
	}
	if rep.Status != "complete" || w.Start == "" || w.End == "" || len(w.Units) == 0 {
		return Want{}, fmt.Errorf("replay of the canned answer: status %q, %d sentences, start %q, end %q", rep.Status, len(w.Units), w.Start, w.End)
	}
	return w, nil
}
