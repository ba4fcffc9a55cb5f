// Command gobench is Trickle's side of the SSE decoding benchmark
// (bench/sse/run.sh): it decodes an OpenAI-style event stream cut into
// fixed-size chunks with sse.Parser and prints one JSON line per chunk size.
// The same program is run natively and compiled to js/wasm on Node (what the
// browser widget runs); peer.mjs does the same work with eventsource-parser.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/sse"
)

// event is the workload's unit, as in the issue: one OpenAI Chat Completions
// chunk and its blank line.
const event = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n"

type counter struct{ events, dataBytes int }

func (c *counter) Event(e sse.Event) { c.events++; c.dataBytes += len(e.Data) }
func (c *counter) Retry(int)         {}

type result struct {
	Impl         string  `json:"impl"`
	Chunk        int     `json:"chunk"`
	Bytes        int     `json:"bytes"`
	Events       int     `json:"events"`
	Runs         int     `json:"runs"`
	MBPerS       float64 `json:"mb_per_s"`     // per CPU second (best run)
	EventsPerS   float64 `json:"events_per_s"` // per CPU second (best run)
	WallMBPerS   float64 `json:"wall_mb_per_s"`
	AllocsPerEvt float64 `json:"allocs_per_event"`
}

func main() {
	mib := flag.Int("mib", 50, "stream size in MiB")
	chunks := flag.String("chunks", "1024,16384", "chunk sizes in bytes, comma-separated")
	runs := flag.Int("runs", 7, "timed runs per chunk size (the best is reported: on a shared machine noise only ever adds time)")
	impl := flag.String("impl", "trickle/sse (Go "+runtime.GOOS+"/"+runtime.GOARCH+")", "label")
	flag.Parse()

	n := *mib << 20 / len(event)
	stream := bytes.Repeat([]byte(event), n)
	for _, f := range strings.Split(*chunks, ",") {
		chunk, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || chunk <= 0 {
			fmt.Fprintf(os.Stderr, "gobench: bad chunk size %q\n", f)
			os.Exit(2)
		}
		res := measure(stream, chunk, *runs)
		if res.Events != n {
			fmt.Fprintf(os.Stderr, "gobench: decoded %d events, want %d\n", res.Events, n)
			os.Exit(1)
		}
		res.Impl = *impl
		line, _ := json.Marshal(res)
		fmt.Println(string(line))
	}
}

func measure(stream []byte, chunk, runs int) result {
	var secs, walls []float64
	var res result
	var ms0, ms1 runtime.MemStats
	for r := 0; r < runs+1; r++ { // the first run warms up and is not timed
		c := &counter{}
		p, err := sse.NewParser(c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gobench:", err)
			os.Exit(1)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		start, cpu0 := time.Now(), cpuSeconds()
		for i := 0; i < len(stream); i += chunk {
			if _, err := p.Write(stream[i:min(i+chunk, len(stream))]); err != nil {
				fmt.Fprintln(os.Stderr, "gobench:", err)
				os.Exit(1)
			}
		}
		if err := p.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "gobench:", err)
			os.Exit(1)
		}
		cpu, wall := cpuSeconds()-cpu0, time.Since(start).Seconds()
		runtime.ReadMemStats(&ms1)
		if r > 0 {
			secs = append(secs, cpu)
			walls = append(walls, wall)
		}
		res.Events = c.events
		res.AllocsPerEvt = float64(ms1.Mallocs-ms0.Mallocs) / float64(c.events)
	}
	best := slices.Min(secs)
	res.WallMBPerS = float64(len(stream)) / 1e6 / slices.Min(walls)
	res.Chunk, res.Bytes, res.Runs = chunk, len(stream), runs
	res.MBPerS = float64(len(stream)) / 1e6 / best
	res.EventsPerS = float64(res.Events) / best
	return res
}
