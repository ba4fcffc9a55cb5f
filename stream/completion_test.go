package stream

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// nonStreamed are JSON completions as each API answers a request without
// stream: true (testdata/completions, written after the providers'
// documented examples), with what the answer must hold.
var nonStreamed = []struct {
	file     string
	dialect  Dialect
	text     string
	thinking string
	calls    [][2]string // name, arguments
	output   int         // output tokens
	finish   string
}{
	{"openai-chat.json", DialectOpenAI, "Streaming shows the answer **as it is written**.\n\n- first\n- second", "", nil, 10, "stop"},
	{"openai-chat-tools.json", DialectOpenAI, "", "", [][2]string{{"get_weather", `{"city":"Paris"}`}}, 12, "tool_calls"},
	{"responses.json", DialectResponses, "Streaming shows the answer as it is written.", "The reader wants a short answer.", nil, 52, "completed"},
	{"anthropic.json", DialectAnthropic, "Streaming shows the answer as it is written.", "A short answer will do.", [][2]string{{"get_weather", `{"city":"Paris","unit":"celsius"}`}}, 503, "tool_use"},
	{"gemini.json", DialectGemini, "Streaming shows the answer as it is written.", "", nil, 9, "STOP"},
	{"ollama.json", DialectOllama, "Streaming shows the answer as it is written.", "", nil, 12, "stop"},
}

// outcome is what a pipeline made of a body, for comparing cuts.
type outcome struct {
	Status   string
	Dialect  Dialect
	Text     string
	Thinking string
	Calls    [][2]string
	Usage    *Usage
	Finish   string
	Err      string
}

func readBody(t *testing.T, contentType string, pieces ...[]byte) outcome {
	t.Helper()
	p, err := NewPipeline(WithContentType(contentType))
	require.NoError(t, err)
	for _, b := range pieces {
		_, _ = p.Write(b)
	}
	_ = p.Close()
	a := p.Answer()
	o := outcome{Status: a.Status().String(), Dialect: p.Dialect(), Text: a.Text(), Thinking: a.Thinking(), Usage: a.Usage(), Finish: a.FinishReason()}
	for _, c := range a.ToolCalls() {
		o.Calls = append(o.Calls, [2]string{c.Name, c.Arguments})
	}
	if a.Err() != nil {
		o.Err = a.Err().Error()
	}
	return o
}

// everyCut reads body whole, in two pieces cut at every byte, and one byte
// at a time, and requires the same outcome each time; it returns it.
func everyCut(t *testing.T, contentType string, body []byte) outcome {
	t.Helper()
	want := readBody(t, contentType, body)
	for i := 1; i < len(body); i++ {
		require.Equal(t, want, readBody(t, contentType, body[:i], body[i:]), "cut at %d", i)
	}
	bytewise := make([][]byte, len(body))
	for i := range body {
		bytewise[i] = body[i : i+1]
	}
	require.Equal(t, want, readBody(t, contentType, bytewise...), "one byte at a time")
	return want
}

// A backend that ignores stream: true answers one JSON completion: it is
// the whole answer, complete, with its usage, whatever its layout (pretty
// or one line, with or without a final newline), its content type (JSON,
// or none: sniffed) and however the body is cut.
func TestANonStreamedCompletionIsTheWholeAnswer(t *testing.T) {
	for _, c := range nonStreamed {
		raw, err := os.ReadFile(filepath.Join("testdata", "completions", c.file))
		require.NoError(t, err)
		var one bytes.Buffer
		require.NoError(t, json.Compact(&one, raw))
		layouts := map[string][]byte{"pretty": raw, "one line": one.Bytes(), "one line and a newline": append(one.Bytes(), '\n')}
		for layout, body := range layouts {
			for _, ct := range []string{"application/json", "application/json; charset=utf-8", ""} {
				t.Run(c.file+"/"+layout+"/"+ct, func(t *testing.T) {
					o := everyCut(t, ct, body)
					require.Equal(t, "complete", o.Status, o.Err)
					require.Equal(t, c.dialect, o.Dialect)
					require.Equal(t, c.text, o.Text)
					require.Equal(t, c.thinking, o.Thinking)
					require.Equal(t, c.calls, o.Calls)
					require.NotNil(t, o.Usage)
					require.Equal(t, c.output, o.Usage.OutputTokens)
					require.Equal(t, c.finish, o.Finish)
				})
			}
		}
	}
}

// JSON of no known shape fails as unreadable, as the README says, however
// it is laid out and cut; NDJSON streams are still read line by line.
func TestJSONOfNoKnownShapeFailsAsUnreadable(t *testing.T) {
	for name, body := range map[string]string{
		"pretty":                "{\n  \"hello\": \"there\"\n}\n",
		"one line":              `{"hello":"there"}`,
		"an object that is cut": "{\n  \"choices\": [\n",
	} {
		t.Run(name, func(t *testing.T) {
			o := everyCut(t, "application/json", []byte(body))
			require.Equal(t, "failed", o.Status)
			require.Contains(t, o.Err, ErrUnreadable.Error())
		})
	}
	t.Run("an Ollama stream", func(t *testing.T) {
		body := `{"message":{"content":"Hel"},"done":false}` + "\n" + `{"message":{"content":"lo"},"done":false}` + "\n" + `{"message":{"content":""},"done":true,"eval_count":2}` + "\n"
		o := everyCut(t, "application/x-ndjson", []byte(body))
		require.Equal(t, "complete", o.Status)
		require.Equal(t, "Hello", o.Text)
	})
}

// The completion reader reads what encoding/json reads from every
// completion body (the oracle every payload shape is held to).
func TestTheCompletionReaderAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range nonStreamed {
		raw, err := os.ReadFile(filepath.Join("testdata", "completions", c.file))
		require.NoError(t, err)
		checkPayload(t, string(raw))
	}
	for _, s := range []string{`{"choices":"no"}`, `{"content":[{"input":null}]}`, `{"usage":null,"incomplete_details":{"reason":"max_output_tokens"}}`, `{"output":[{"summary":[{"text":1}]}]}`} {
		checkPayload(t, s)
	}
}
