package wasmdata

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is a WebAssembly module with one memory, segs in its data
// section in the order given, and a custom section after it (which must
// come through untouched).
func module(segs []Segment) []byte {
	end := 0
	for _, s := range segs {
		end = max(end, int(s.Offset)+len(s.Data))
	}
	pages := uint64(end/65536 + 1)
	m := append([]byte{}, magic...)
	mem := appendULEB([]byte{0x01, 0x00}, pages) // one memory, min pages
	m = append(m, 5)
	m = appendULEB(m, uint64(len(mem)))
	m = append(m, mem...)
	body := appendULEB(nil, uint64(len(segs)))
	for _, s := range segs {
		body = append(body, 0x00, 0x41)
		body = appendSLEB(body, int64(s.Offset))
		body = append(body, 0x0b)
		body = appendULEB(body, uint64(len(s.Data)))
		body = append(body, s.Data...)
	}
	m = append(m, sectionData)
	m = appendULEB(m, uint64(len(body)))
	m = append(m, body...)
	custom := append(appendULEB(nil, 4), "note"...)
	custom = append(custom, "kept"...)
	m = append(m, 0)
	m = appendULEB(m, uint64(len(custom)))
	return append(m, custom...)
}

// randomSegments lays out n segments of non-zero bytes with random gaps
// (none, small, around maxGap, large), in a shuffled order as Go's linker
// writes two runs of them.
func randomSegments(r *rand.Rand, n, maxGap int) []Segment {
	var segs []Segment
	off := uint32(r.IntN(1 << 12))
	for range n {
		data := make([]byte, 1+r.IntN(40))
		for i := range data {
			data[i] = byte(1 + r.IntN(255))
		}
		segs = append(segs, Segment{Offset: off, Data: data})
		var gap int
		switch r.IntN(5) {
		case 0:
			gap = 0
		case 1:
			gap = r.IntN(20)
		case 2:
			gap = maxGap
		case 3:
			gap = maxGap + 1
		default:
			gap = r.IntN(3 * (maxGap + 1))
		}
		off += uint32(len(data) + gap)
	}
	r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	return segs
}

func TestMergedSegmentsInitialiseTheSameMemoryAndNothingElseChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, maxGap := range []int{0, 1, 32, 4096} {
		for range 200 {
			segs := randomSegments(r, 1+r.IntN(60), maxGap)
			in := module(segs)
			out, err := MergeSegments(in, maxGap)
			require.NoError(t, err)

			before, err := Image(in)
			require.NoError(t, err)
			after, err := Image(out)
			require.NoError(t, err)
			require.Equal(t, before, after, "the memory the segments initialise")

			got, err := Segments(out)
			require.NoError(t, err)
			// One segment per run of segments whose gaps are at most
			// maxGap, in offset order.
			sorted := append([]Segment{}, segs...)
			for i := 1; i < len(sorted); i++ {
				for j := i; j > 0 && sorted[j].Offset < sorted[j-1].Offset; j-- {
					sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
				}
			}
			want := 1
			for i := 1; i < len(sorted); i++ {
				if int(sorted[i].Offset)-(int(sorted[i-1].Offset)+len(sorted[i-1].Data)) > maxGap {
					want++
				}
			}
			require.Len(t, got, want)
			for i := 1; i < len(got); i++ {
				require.Greater(t, got[i].Offset, got[i-1].Offset)
			}

			// The sections before and after the data section are the
			// same bytes.
			inSecs, err := sections(in)
			require.NoError(t, err)
			outSecs, err := sections(out)
			require.NoError(t, err)
			require.Len(t, outSecs, len(inSecs))
			for i := range inSecs {
				if inSecs[i].id == sectionData {
					continue
				}
				require.Equal(t, in[inSecs[i].start:inSecs[i].end], out[outSecs[i].start:outSecs[i].end])
			}
		}
	}
}

func TestWhatTheRewriteDoesNotKnowIsRefused(t *testing.T) {
	good := module([]Segment{{Offset: 8, Data: []byte{1}}, {Offset: 16, Data: []byte{2}}})

	_, err := MergeSegments([]byte("not wasm"), 32)
	require.Error(t, err)

	overlap := module([]Segment{{Offset: 8, Data: []byte{1, 2, 3}}, {Offset: 9, Data: []byte{4}}})
	_, err = MergeSegments(overlap, 32)
	require.ErrorIs(t, err, ErrUnsupported)

	passive := bytes.Replace(good, []byte{0x00, 0x41, 0x08, 0x0b}, []byte{0x01, 0x41, 0x08, 0x0b}, 1)
	require.NotEqual(t, good, passive)
	_, err = MergeSegments(passive, 32)
	require.ErrorIs(t, err, ErrUnsupported)

	_, err = MergeSegments(good[:len(good)-12], 32)
	require.Error(t, err, "a truncated module")

	noData := append([]byte{}, magic...)
	out, err := MergeSegments(noData, 32)
	require.NoError(t, err)
	require.Equal(t, noData, out)
}

// On a module the Go toolchain linked (the floor of make size: goldmark
// and the runtime), the merged module is one a WebAssembly engine takes,
// and instantiated it holds the same memory as the original, compared in
// Node's engine (the one Chromium has).
func TestAGoBuiltModuleMergedIsValidAndInstantiatesToTheSameMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("links a Go program for js/wasm")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is needed to instantiate the merged module")
		}
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	orig := filepath.Join(dir, "floor.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", orig, "../size/floor")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	in, err := os.ReadFile(orig)
	require.NoError(t, err)
	segs, err := Segments(in)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1000, "Go's linker writes a segment per run of non-zero data")

	merged, err := MergeSegments(in, 4096)
	require.NoError(t, err)
	after, err := Segments(merged)
	require.NoError(t, err)
	require.Less(t, len(after), 100)
	mergedPath := filepath.Join(dir, "merged.wasm")
	require.NoError(t, os.WriteFile(mergedPath, merged, 0o644))

	// Instantiate both with every import a stub and compare their
	// memories: the imports are never called before the start function,
	// which Go's modules do not have (run() is exported instead).
	script := `
const fs = require("fs");
async function memoryOf(path) {
  const bytes = fs.readFileSync(path);
  if (!WebAssembly.validate(bytes)) throw new Error(path + " does not validate");
  const mod = await WebAssembly.compile(bytes);
  const imports = {};
  for (const imp of WebAssembly.Module.imports(mod)) {
    imports[imp.module] ??= {};
    imports[imp.module][imp.name] = () => {};
  }
  const inst = await WebAssembly.instantiate(mod, imports);
  const mem = Object.values(inst.exports).find((e) => e instanceof WebAssembly.Memory);
  return new Uint8Array(mem.buffer);
}
(async () => {
  const [a, b] = await Promise.all([memoryOf(process.argv[1]), memoryOf(process.argv[2])]);
  if (a.length !== b.length) throw new Error("memory sizes differ: " + a.length + " " + b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) throw new Error("memories differ at " + i);
  console.log("same " + a.length);
})().catch((e) => { console.error(e.message); process.exit(1); });
`
	res, err := exec.Command(node, "-e", script, orig, mergedPath).CombinedOutput()
	require.NoError(t, err, string(res))
	require.True(t, strings.HasPrefix(string(res), "same "), string(res))
}
