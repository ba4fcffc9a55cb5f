package main

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// stopScenario: a chat turn stopped with Escape in the composer once Orca
// has spoken two of the answer's sentences. What Orca must say is what
// the widget wrote, each once, whole and in order (the sentences before
// the stop, then what of the next one had arrived: the end of a stream is
// a hard boundary for the announcer), then "Answer stopped." after it.
func stopScenario(tab context.Context, lab *Lab, want Want, url, message string) (*result, error) {
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
	if err := do(tab, 10*time.Second, js(`document.querySelector("[data-trickle-chat=input]").value = `+jsString(message))); err != nil {
		return nil, err
	}
	lab.WaitQuiet(tab, 2*time.Second, 30*time.Second)
	r := &result{name: "stop", action: "Enter pressed in the composer, then Escape after two sentences" + keysVia(lab), before: lab.OrcaSaid()}
	r.t0 = time.Now()
	if err := pressEnter(tab, lab); err != nil {
		return nil, err
	}
	// Escape once Orca has said two sentences: the answer is half heard.
	deadline := time.Now().Add(60 * time.Second)
	for {
		heard, _ := Classify(since(lab.OrcaSaid(), r.t0), want)
		n := 0
		for _, h := range heard {
			n += h.Units
		}
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) || tab.Err() != nil {
			return nil, fmt.Errorf("Orca did not say two sentences of the answer within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.mark = time.Now()
	if err := pressKey(tab, lab, "Escape"); err != nil {
		return nil, err
	}
	if err := waitJS(tab, 2*time.Minute, `(() => { const c = document.querySelector("trickle-chat"); return !c.busy && c.messages.some((m) => m.role === "assistant"); })()`); err != nil {
		return nil, err
	}
	end := "Answer stopped."
	r, err := finishWith(tab, lab, r, func(ws []written) Want {
		w := Want{Start: want.Start, End: end, Own: []string{message}}
		for _, x := range ws {
			if x.Region == "log" {
				w.Units = append(w.Units, x.Text)
			}
		}
		return w
	})
	if err != nil {
		return nil, err
	}
	// What was said is the answer's beginning: its first sentences, then
	// what had come of the next (the announcer ends a cut-off tail with
	// a full stop of its own).
	var said []string
	for _, x := range r.written {
		if x.Region == "log" {
			said = append(said, x.Text)
		}
	}
	heard := strings.TrimSuffix(norm(strings.Join(said, " ")), ".")
	whole := norm(strings.Join(want.Units, " "))
	r.exp = append(r.exp, Expectation{Name: "what was said is the answer's beginning", OK: heard != "" && strings.HasPrefix(whole, heard),
		Why: fmt.Sprintf("%d of the answer's %d characters said before the stop", len(heard), len(whole))})
	// Where what was heard ends: a stopped answer is heard up to its last
	// whole sentence (a11y's StopWith), never into the sentence the stop
	// cut, half a word and a full stop added.
	cut := ""
	if rest, ok := strings.CutPrefix(whole, heard); ok && heard != "" && rest != "" {
		last := said[len(said)-1]
		next, _ := utf8.DecodeRuneInString(rest)
		prev, _ := utf8.DecodeLastRuneInString(heard)
		switch {
		case unicode.IsLetter(next) && unicode.IsLetter(prev):
			cut = fmt.Sprintf("the last announcement, %q, ends in the middle of a word", last)
		case !strings.ContainsAny(string(prev), ".!?:;"):
			cut = fmt.Sprintf("the last announcement, %q, is the beginning of a sentence, ended with a full stop", last)
		}
	}
	r.exp = append(r.exp, Expectation{Name: "the sentence the stop cut is not read out", OK: cut == "",
		Why: map[bool]string{true: "what was heard ends with a whole sentence", false: cut}[cut == ""]})
	status, err := evalJS[string](tab, 10*time.Second, `document.querySelector("trickle-chat").messages.findLast((m) => m.role === "assistant")?.status ?? ""`)
	if err != nil {
		return nil, err
	}
	r.exp = append(r.exp, Expectation{Name: "Escape stopped the answer", OK: status == "stopped",
		Why: fmt.Sprintf("the answer's status is %q", status)})
	return r, nil
}

func since(said []Utterance, t0 time.Time) []Utterance {
	var out []Utterance
	for _, u := range said {
		if !u.At.Before(t0) {
			out = append(out, u)
		}
	}
	return out
}
