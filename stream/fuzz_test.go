package stream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzDialect checks, for arbitrary bytes read as the given dialect, with
// auto-detection, and with a small event bound (so drops happen): no panic, and the same outcome however the bytes
// are cut (whole, split at one fuzzed offset, one byte at a time).
func fuzzDialect(f *testing.F, dialect Dialect) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), string(dialect)+"-") || (dialect == "plain" && strings.HasPrefix(e.Name(), "relay-")) {
			b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, uint16(len(b)/2))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		for _, opts := range [][]Option{{WithDialect(dialect)}, nil, {WithMaxEventSize(96)}} {
			whole := run(t, data, nil, opts...)
			if len(data) > 1 {
				at := 1 + int(cut)%(len(data)-1)
				if got := run(t, data, []int{at}, opts...); !snapshotsEqual(whole, got) {
					t.Fatalf("split at %d differs:\nwhole %#v\nsplit %#v", at, whole, got)
				}
			}
			if len(data) <= 4096 {
				cuts := make([]int, 0, len(data))
				for i := 1; i < len(data); i++ {
					cuts = append(cuts, i)
				}
				if got := run(t, data, cuts, opts...); !snapshotsEqual(whole, got) {
					t.Fatalf("byte by byte differs:\nwhole %#v\nbytes %#v", whole, got)
				}
			}
		}
	})
}

func FuzzOpenAI(f *testing.F)    { fuzzDialect(f, "openai") }
func FuzzResponses(f *testing.F) { fuzzDialect(f, "responses") }
func FuzzAnthropic(f *testing.F) { fuzzDialect(f, "anthropic") }
func FuzzGemini(f *testing.F)    { fuzzDialect(f, "gemini") }
func FuzzOllama(f *testing.F)    { fuzzDialect(f, "ollama") }
func FuzzPlain(f *testing.F)     { fuzzDialect(f, "plain") }
func FuzzText(f *testing.F)      { fuzzDialect(f, DialectText) }
func FuzzAISDK(f *testing.F)     { fuzzDialect(f, DialectAISDK) }
func FuzzAGUI(f *testing.F)      { fuzzDialect(f, DialectAGUI) }
