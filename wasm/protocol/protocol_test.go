package protocol

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: go test ./wasm/protocol -update.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, the file the page's tests read
// too (wasm/web/test/protocol.test.js), or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./wasm/protocol -update writes it")
	require.Equal(t, string(want), string(got), "%s is the protocol both sides read: change both, then -update", path)
}

func TestReadyCarriesTheVersionAndTheGap(t *testing.T) {
	msg := Ready("worker", 300*time.Millisecond)
	var m struct {
		T, Thread string
		V         int
		MinGapMS  int `json:"min_gap_ms"`
	}
	require.NoError(t, json.Unmarshal([]byte(msg), &m))
	require.Equal(t, TypeReady, m.T)
	require.Equal(t, "worker", m.Thread)
	require.Equal(t, Version, m.V)
	require.Equal(t, 300, m.MinGapMS)
	golden(t, "ready.json", []byte(msg+"\n"))
}

func TestAcksRoundTripAndNothingElseIsOne(t *testing.T) {
	type ack struct {
		Wire string  `json:"wire"`
		At   float64 `json:"at"`
		Wake bool    `json:"wake"`
	}
	var acks []ack
	for _, a := range []Ack{{At: 1700000000123.25}, {At: 42, Wake: true}} {
		got, ok := ParseAck(a.String())
		require.True(t, ok, a.String())
		require.Equal(t, a, got)
		acks = append(acks, ack{a.String(), a.At, a.Wake})
	}
	for _, bad := range []string{"", "ack", "ack:", "ack:x", "nack:1", "ack+wake", "wake:1"} {
		_, ok := ParseAck(bad)
		require.False(t, ok, "%q", bad)
	}
	b, err := json.MarshalIndent(acks, "", "  ")
	require.NoError(t, err)
	golden(t, "acks.json", append(b, '\n'))
}

func TestTheInboxFixtureIsTheLayout(t *testing.T) {
	type chunk struct {
		Data    string  `json:"data"`
		Arrived float64 `json:"arrived"`
	}
	fx := struct {
		Took   float64 `json:"took"`
		Chunks []chunk `json:"chunks"`
		Batch  []byte  `json:"batch"`
	}{Took: 1000, Chunks: []chunk{{"data: a\n", 984.5}, {"", 990}, {"\ndata: é\n\n", 999}}}
	var data [][]byte
	var arrived []float64
	for _, c := range fx.Chunks {
		data, arrived = append(data, []byte(c.Data)), append(arrived, c.Arrived)
	}
	fx.Batch = AppendInbox(nil, fx.Took, data, arrived)
	now := time.Unix(1_700_000_000, 0)
	got, err := ParseInbox(fx.Batch, now, nil)
	require.NoError(t, err)
	for i, c := range fx.Chunks {
		require.Equal(t, c.Data, string(got[i].Data))
		require.Equal(t, now.Add(-time.Duration((fx.Took-c.Arrived)*float64(time.Millisecond))), got[i].At)
	}
	b, err := json.MarshalIndent(fx, "", "  ")
	require.NoError(t, err)
	golden(t, "inbox.json", append(b, '\n'))
}

func TestTheClockConvertsBothWays(t *testing.T) {
	c := Clock{Go: time.Unix(1_700_000_000, 0), JS: 1_700_000_000_000}
	at := c.At(1_699_999_999_750.5)
	require.Equal(t, c.Go.Add(-249500*time.Microsecond), at)
	require.InDelta(t, 1_699_999_999_750.5, c.MS(at), 1e-3)
	require.True(t, c.At(0).IsZero(), "0 is no time")
}

func TestStatsIsJSON(t *testing.T) {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(StatsMessage(Counts{Elements: 2, Funcs: 5, Goroutines: 3, Thread: `"main"`, HeapInuse: 7 << 20, Sys: 9 << 20, WasmMemory: 12 << 20, NumGC: 4})), &m))
	require.Equal(t, map[string]any{"t": "stats", "elements": 2.0, "funcs": 5.0, "goroutines": 3.0, "thread": `"main"`, "heap_inuse": float64(7 << 20), "sys": float64(9 << 20), "wasm_memory": float64(12 << 20), "num_gc": 4.0}, m)
	require.NoError(t, json.Unmarshal([]byte(Warm(`<p a="1">x</p>`)), &m))
	require.Equal(t, `<p a="1">x</p>`, m["html"])
}
