package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// TraceEvent is one event of a Chrome trace (the fields the counts use).
type TraceEvent struct {
	Name string  `json:"name"`
	Cat  string  `json:"cat"`
	Ph   string  `json:"ph"`
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
	Ts   float64 `json:"ts"`
	Dur  float64 `json:"dur"`
}

// Work is the rendering work a page's main thread did between two marks:
// style recalculations (UpdateLayoutTree) and layouts, the ones of them a
// script forced (they ran inside a script event: geometry or the selection
// read after a DOM write, where the browser must bring style and layout up
// to date before it can answer), and the script time (outermost script
// events, less the forced work inside them).
type Work struct {
	StyleRecalcs  int
	Layouts       int
	ForcedStyle   int
	ForcedLayouts int
	ScriptMs      float64
}

// scriptEvents are the trace events that run a page's script: a style
// recalculation or layout inside one was forced by it (the rendering's own
// run after the animation frame callbacks and observers, outside any).
var scriptEvents = map[string]bool{
	"FunctionCall": true, "EventDispatch": true, "FireAnimationFrame": true, "TimerFire": true,
	"EvaluateScript": true, "v8.evaluateModule": true, "FireIdleCallback": true, "RunMicrotasks": true,
	"ResizeObserverCallback": true, "IntersectionObserverCallback": true, "v8.callFunction": true,
}

// CountWork counts the Work of the thread that made the user-timing marks
// startMark and endMark (performance.mark), between the two.
func CountWork(events []TraceEvent, startMark, endMark string) (Work, error) {
	var start, end *TraceEvent
	for i := range events {
		e := &events[i]
		if strings.Contains(e.Cat, "blink.user_timing") {
			switch e.Name {
			case startMark:
				start = e
			case endMark:
				end = e
			}
		}
	}
	if start == nil || end == nil {
		return Work{}, fmt.Errorf("browsertest: the trace has no %s/%s marks (%d events)", startMark, endMark, len(events))
	}
	var evs []TraceEvent
	for _, e := range events {
		if e.Pid != start.Pid || e.Tid != start.Tid || e.Ph != "X" || e.Ts+e.Dur < start.Ts || e.Ts > end.Ts {
			continue
		}
		if scriptEvents[e.Name] || e.Name == "Layout" || e.Name == "UpdateLayoutTree" {
			evs = append(evs, e)
		}
	}
	// Events of one thread nest: sorted by start (the longer first), an
	// event starting before the open script event's end is inside it.
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Ts != evs[j].Ts {
			return evs[i].Ts < evs[j].Ts
		}
		return evs[i].Dur > evs[j].Dur
	})
	var w Work
	scriptEnd := -1.0
	for _, e := range evs {
		inScript := e.Ts < scriptEnd
		switch {
		case scriptEvents[e.Name]:
			if !inScript {
				scriptEnd = e.Ts + e.Dur
				w.ScriptMs += e.Dur / 1000
			}
		case e.Name == "Layout":
			w.Layouts++
			if inScript {
				w.ForcedLayouts++
				w.ScriptMs -= e.Dur / 1000
			}
		case e.Name == "UpdateLayoutTree":
			w.StyleRecalcs++
			if inScript {
				w.ForcedStyle++
				w.ScriptMs -= e.Dur / 1000
			}
		}
	}
	return w, nil
}

// Trace records a Chrome trace of the whole browser (the categories that
// CountWork reads) while run runs in tab, and returns its events.
func Trace(tab context.Context, run func() error) ([]TraceEvent, error) {
	var mu sync.Mutex
	var events []TraceEvent
	complete := make(chan struct{})
	ctx, cancel := context.WithCancel(tab)
	defer cancel()
	if err := chromedp.ListenBrowser(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, v := range e.Value {
				var te TraceEvent
				if json.Unmarshal([]byte(v), &te) == nil {
					events = append(events, te)
				}
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			close(complete)
		}
	}); err != nil {
		return nil, err
	}
	if _, err := chromedp.CallBrowser(ctx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig:  &tracing.TraceConfig{IncludedCategories: []string{"toplevel", "blink.user_timing", "devtools.timeline"}},
	}); err != nil {
		return nil, fmt.Errorf("browsertest: starting the trace: %w", err)
	}
	runErr := run()
	if _, err := chromedp.CallBrowser(ctx, tracing.End, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("browsertest: ending the trace: %w", err)
	}
	select {
	case <-complete:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	return events, runErr
}
