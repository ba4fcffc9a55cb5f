package stream

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/internal/jsonx"
)

// UnmarshalJSON lets encoding/json, the oracle these tests hold the
// decoders to, fill a rawJSON as it fills a json.RawMessage.
func (r *rawJSON) UnmarshalJSON(b []byte) error { *r = rawJSON(b); return nil }

// unmarshal decodes data through read as a payload's decode does.
func unmarshal(data string, read func(r *jsonx.Reader)) error {
	r, err := jsonx.NewReader(data)
	if err == nil {
		read(&r)
		err = r.Err()
	}
	return eventError(err)
}

// payloadShapes are every struct the decoders read an event's data into,
// each with its jsonx reader.
var payloadShapes = []struct {
	name string
	new  func() (any, func(*jsonx.Reader))
}{
	{"anthropicEvent", func() (any, func(*jsonx.Reader)) { v := &anthropicEvent{}; return v, v.read }},
	{"openaiChunk", func() (any, func(*jsonx.Reader)) { v := &openaiChunk{}; return v, v.read }},
	{"plainChunk", func() (any, func(*jsonx.Reader)) { v := &plainChunk{}; return v, v.read }},
	{"geminiChunk", func() (any, func(*jsonx.Reader)) { v := &geminiChunk{}; return v, v.read }},
	{"ollamaChunk", func() (any, func(*jsonx.Reader)) { v := &ollamaChunk{}; return v, v.read }},
	{"responsesEvent", func() (any, func(*jsonx.Reader)) { v := &responsesEvent{}; return v, v.read }},
	{"statusData", func() (any, func(*jsonx.Reader)) { v := &statusData{}; return v, v.read }},
	{"detectProbe", func() (any, func(*jsonx.Reader)) { v := &detectProbe{}; return v, v.read }},
	{"apiError", func() (any, func(*jsonx.Reader)) { v := &apiError{}; return v, v.read }},
	{"aisdkPart", func() (any, func(*jsonx.Reader)) { v := &aisdkPart{}; return v, v.read }},
	{"completion", func() (any, func(*jsonx.Reader)) { v := &completion{}; return v, v.read }},
	{"aguiEvent", func() (any, func(*jsonx.Reader)) { v := &aguiEvent{}; return v, v.read }},
	{"anthropicSearchResult", func() (any, func(*jsonx.Reader)) { v := &anthropicSearchResult{}; return v, v.read }},
}

// checkPayload decodes data into every shape with encoding/json and with
// the jsonx readers: both must fail the same way (ErrBadJSON for bad
// syntax, ErrUnknownEvent for a wrong shape) or decode the same values.
func checkPayload(t *testing.T, data string) {
	t.Helper()
	for _, shape := range payloadShapes {
		want, _ := shape.new()
		wantErr := json.Unmarshal([]byte(data), want)
		got, read := shape.new()
		gotErr := unmarshal(data, read)
		var typeErr *json.UnmarshalTypeError
		switch {
		case wantErr == nil:
			require.NoError(t, gotErr, "%s from %q", shape.name, data)
			require.True(t, reflect.DeepEqual(want, got), "%s from %q:\nencoding/json %#v\njsonx         %#v", shape.name, data, want, got)
		case errors.As(wantErr, &typeErr):
			require.ErrorIs(t, gotErr, ErrUnknownEvent, "%s from %q: encoding/json says %v", shape.name, data, wantErr)
		default:
			require.ErrorIs(t, gotErr, ErrBadJSON, "%s from %q: encoding/json says %v", shape.name, data, wantErr)
		}
	}
}

// recordedPayloads are the data of every event in testdata.
func recordedPayloads(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	require.NoError(t, err)
	var out []string
	for _, name := range files {
		if st, err := os.Stat(name); err != nil || st.IsDir() {
			continue // aisdk/, the project that records the AI SDK's streams
		}
		f, err := os.Open(name)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if strings.HasSuffix(name, ".ndjson") {
				out = append(out, line)
			} else if d, ok := strings.CutPrefix(line, "data:"); ok {
				out = append(out, strings.TrimPrefix(d, " "))
			}
		}
		require.NoError(t, f.Close())
	}
	require.NotEmpty(t, out)
	return out
}

func TestEveryRecordedPayloadDecodesAsEncodingJSONDecodesIt(t *testing.T) {
	for _, data := range recordedPayloads(t) {
		checkPayload(t, data)
	}
}

// payloadVariants rewrites a recorded payload the ways a provider, a proxy
// or an attacker might: keys in other cases, values of other types, null,
// repeated members, escapes, cuts.
var payloadVariants = []func(rng *rand.Rand, s string) string{
	func(_ *rand.Rand, s string) string { return strings.ToUpper(s) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `":"`, `":5,"x":"`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `":{`, `":null,"y":{`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `:0`, `:"0"`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `:0`, `:0.5`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `":[`, `":{},"z":[`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `":"`, `":null,"`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `"type"`, `"Type"`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `"index"`, `"\u0069ndex"`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `e"`, `\u00e9\ud83d"`) },
	func(_ *rand.Rand, s string) string { return strings.ReplaceAll(s, `true`, `1`) },
	func(_ *rand.Rand, s string) string {
		if strings.HasSuffix(s, "}") {
			return s[:len(s)-1] + "," + s[1:] // every member twice
		}
		return s
	},
	func(rng *rand.Rand, s string) string {
		if s == "" {
			return s
		}
		return s[:rng.IntN(len(s))]
	},
	func(rng *rand.Rand, s string) string {
		if s == "" {
			return s
		}
		i := rng.IntN(len(s))
		return s[:i] + string(`{}[]",:0 \`[rng.IntN(10)]) + s[i+1:]
	},
}

func TestVariedPayloadsDecodeAsEncodingJSONDecodesThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rounds := 4
	if testing.Short() {
		rounds = 1
	}
	for _, data := range recordedPayloads(t) {
		for range rounds {
			v := data
			for range 1 + rng.IntN(3) {
				v = payloadVariants[rng.IntN(len(payloadVariants))](rng, v)
			}
			checkPayload(t, v)
		}
	}
}

func FuzzPayloadsDecodeAsEncodingJSONDecodesThem(f *testing.F) {
	for _, data := range recordedPayloads(f) {
		f.Add(data)
	}
	f.Add(`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"delta":{}}]}`)
	f.Add(`{"TYPE":"message_start","message":{"usage":{"input_tokens":1.5}}}`)
	f.Fuzz(checkPayload)
}
