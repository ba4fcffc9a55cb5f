package stream

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files other tests read (wasm/web/early/testdata/golden.json)")

// earlyGolden is wasm/web/early/testdata/golden.json: for every recording
// in testdata, the text the Go pipeline holds after each byte of it, which
// the page's early reader (wasm/web/early/reader.js) is checked against
// with node --test: its text must be a prefix of Go's at every cut.
type earlyGolden struct {
	Comment    string        `json:"comment"`
	Recordings []earlyRecord `json:"recordings"`
}

type earlyRecord struct {
	File string `json:"file"`
	// ContentType is the one the recording is read with, when it is not
	// told by its bytes (a .txt one is text/plain).
	ContentType string `json:"content_type,omitempty"`
	// Text is the answer's text once the whole recording was written,
	// before Close (the early reader never sees a close).
	Text string `json:"text"`
	// Steps are [bytes written, length of the text in UTF-16 code units]
	// at each byte where the text grew: after n bytes, Go's text is
	// Text[:length] of the last step with bytes <= n.
	Steps [][2]int `json:"steps"`
}

const earlyGoldenPath = "../wasm/web/early/testdata/golden.json"

func buildEarlyGolden(t *testing.T) []byte {
	t.Helper()
	files, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	g := earlyGolden{Comment: "written by go test ./stream -run TestTheEarlyReadersGoldenTextIsTheGoPipelines -update; read by wasm/web/early/reader.test.js"}
	for _, f := range files {
		if !strings.HasSuffix(f, ".sse") && !strings.HasSuffix(f, ".ndjson") && !strings.HasSuffix(f, ".txt") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		// Byte by byte: the pipeline's result does not depend on the cut
		// (TestRecordingsAreCutInvariant), so this is its
		// text after every prefix.
		rec := earlyRecord{File: filepath.Base(f), Steps: [][2]int{}}
		var opts []Option
		if strings.HasSuffix(f, ".txt") {
			rec.ContentType = "text/plain; charset=utf-8"
			opts = append(opts, WithContentType(rec.ContentType))
		}
		p := newPipeline(t, opts...)
		n := 0
		for i := range data {
			_, err := p.Write(data[i : i+1])
			require.NoError(t, err)
			if l := len(utf16.Encode([]rune(p.Answer().Text()))); l != n {
				n = l
				rec.Steps = append(rec.Steps, [2]int{i + 1, l})
			}
		}
		rec.Text = p.Answer().Text()
		g.Recordings = append(g.Recordings, rec)
	}
	require.NotEmpty(t, g.Recordings)
	// One recording a line, so that a change shows as one in a diff.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	comment, _ := json.Marshal(g.Comment)
	b.WriteString("{\"comment\": " + string(comment) + ",\n\"recordings\": [\n")
	for i, r := range g.Recordings {
		require.NoError(t, enc.Encode(r))
		b.Truncate(b.Len() - 1) // Encode's newline
		if i < len(g.Recordings)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

func TestTheEarlyReadersGoldenTextIsTheGoPipelines(t *testing.T) {
	want := buildEarlyGolden(t)
	if *updateGolden {
		require.NoError(t, os.WriteFile(earlyGoldenPath, want, 0o644))
	}
	got, err := os.ReadFile(earlyGoldenPath)
	require.NoError(t, err, "run go test ./stream -run %s -update", t.Name())
	require.Equal(t, string(want), string(got), "%s is stale: run go test ./stream -run %s -update", earlyGoldenPath, t.Name())
}
