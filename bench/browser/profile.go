package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/chromedp/cdproto/profiler"
)

// selfTime is one function's share of a CPU profile.
type selfTime struct {
	Function string  `json:"function"`
	Ms       float64 `json:"ms"`
}

// profileSummary folds a V8 CPU profile into self time per function, only
// counting samples taken between from and to (microseconds, the trace's
// clock: V8's profile timestamps and Chrome's trace timestamps are both
// monotonic TimeTicks). A sample's time is the gap to the next sample.
// Functions are named by name and script file, so the Go functions of a
// widget built with symbols (see -cpuprofile) show as themselves, and
// the browser's own work as "(program)" and "(garbage collector)".
func profileSummary(p *profiler.Profile, from, to float64) (top []selfTime, total float64) {
	if p == nil || len(p.Samples) == 0 {
		return nil, 0
	}
	name := map[int64]string{}
	for _, n := range p.Nodes {
		f := "(anonymous)"
		if n.CallFrame != nil {
			if n.CallFrame.FunctionName != "" {
				f = n.CallFrame.FunctionName
			}
			if u := n.CallFrame.URL; u != "" {
				f += " " + u[strings.LastIndexByte(u, '/')+1:]
			}
		}
		name[n.ID] = f
	}
	self := map[string]float64{}
	ts := p.StartTime
	for i, id := range p.Samples {
		ts += float64(p.TimeDeltas[i])
		if ts < from || ts > to || i+1 >= len(p.Samples) {
			continue
		}
		d := float64(p.TimeDeltas[i+1]) / 1000
		if name[id] == "(idle)" {
			continue
		}
		self[name[id]] += d
		total += d
	}
	for f, ms := range self {
		top = append(top, selfTime{f, ms})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].Ms > top[j].Ms })
	return top, total
}

// writeProfile saves the profile where Chrome's DevTools can open it
// (Performance panel, "Load profile").
func writeProfile(p *profiler.Profile, path string) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing the CPU profile: %w", err)
	}
	return nil
}
