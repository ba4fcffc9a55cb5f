package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const recordingsDir = "../../stream/testdata"

// trickle runs the command in-process and returns its exit code and output.
func trickle(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func recordingFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(recordingsDir, "*"))
	require.NoError(t, err)
	var names []string
	for _, n := range all {
		if st, err := os.Stat(n); err == nil && !st.IsDir() { // not aisdk/, the project that records the AI SDK's streams
			names = append(names, n)
		}
	}
	require.NotEmpty(t, names)
	return names
}

func TestReplayGivesTheSameJSONWhateverTheChunkSize(t *testing.T) {
	for _, f := range recordingFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, whole, stderr := trickle(t, "", "replay", f)
			require.Equal(t, 0, code, stderr)
			for _, n := range []string{"1", "7", "64"} {
				code, got, stderr := trickle(t, "", "replay", "--chunk", n, f)
				require.Equal(t, 0, code, stderr)
				require.Equal(t, whole, got, "--chunk %s", n)
			}
			code, sseWhole, _ := trickle(t, "", "replay", "--sse", f)
			require.Equal(t, 0, code)
			for _, n := range []string{"1", "7"} {
				_, got, _ := trickle(t, "", "replay", "--sse", "--chunk", n, f)
				require.Equal(t, sseWhole, got, "--sse --chunk %s", n)
			}
		})
	}
}

func TestReplayReportsTheAnswerAsJSON(t *testing.T) {
	cases := []struct {
		file, dialect, status, text, finish, errType string
		tools                                        int
		usage                                        bool
	}{
		{"openai-text.sse", "openai", "complete", "# Tea time\n\nGreen tea isn’t bitter", "stop", "", 0, true},
		{"openai-tools.sse", "openai", "complete", "", "tool_calls", "", 2, true},
		{"openai-truncated.sse", "openai", "incomplete", "Cut off mid", "", "incomplete", 0, false},
		{"anthropic-overloaded.sse", "anthropic", "failed", "The first half of the answer", "", "overloaded_error", 0, true},
		{"gemini-thinking-crlf.sse", "gemini", "complete", "The sky looks blue", "STOP", "", 0, true},
		{"ollama-thinking.ndjson", "ollama", "complete", "Hello! How can I help? 😊", "stop", "", 0, true},
		{"responses-tool.sse", "responses", "complete", "", "completed", "", 1, true},
		{"relay-stopped.sse", "openai", "stopped", "Stopped midway", "", "relay_stopped", 0, false},
		{"plain.sse", "plain", "complete", "Plain text, no frills.", "", "", 0, false},
		{"text-markdown.txt", "text", "complete", "## Green tea\n\nBrew it at **80 °C**", "", "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			code, out, stderr := trickle(t, "", "replay", filepath.Join(recordingsDir, c.file))
			require.Equal(t, 0, code, stderr)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			for _, k := range []string{"dialect", "status", "text", "thinking", "tool_calls", "finish_reason", "usage", "error"} {
				require.Contains(t, got, k)
			}
			require.Equal(t, c.dialect, got["dialect"])
			require.Equal(t, c.status, got["status"])
			require.True(t, strings.HasPrefix(got["text"].(string), c.text), "text %q", got["text"])
			require.Equal(t, c.finish, got["finish_reason"])
			require.Len(t, got["tool_calls"], c.tools)
			if c.usage {
				require.NotNil(t, got["usage"])
			} else {
				require.Nil(t, got["usage"])
			}
			if c.errType == "" {
				require.Nil(t, got["error"])
			} else {
				e := got["error"].(map[string]any)
				require.Equal(t, c.errType, e["type"])
				require.NotEmpty(t, e["message"])
			}
		})
	}
}

func TestReplayToolCallsCarryIDNameAndArguments(t *testing.T) {
	_, out, _ := trickle(t, "", "replay", filepath.Join(recordingsDir, "openai-tools.sse"))
	var got struct {
		ToolCalls []struct{ ID, Name, Arguments string } `json:"tool_calls"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, "call_DdmO9pD3xa9XTPNJ32zg2hcA", got.ToolCalls[0].ID)
	require.Equal(t, "get_weather", got.ToolCalls[0].Name)
	require.JSONEq(t, `{"location":"Paris, France"}`, got.ToolCalls[0].Arguments)
}

func TestReplayShowsSourcesFilesAndApprovals(t *testing.T) {
	_, out, _ := trickle(t, "", "replay", filepath.Join(recordingsDir, "ai-sdk-sources.sse"))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, []any{
		map[string]any{"id": "src_1", "url": "https://example.com/green-tea", "title": "Brewing green tea"},
		map[string]any{"id": "src_2", "title": "The tea guide", "media_type": "application/pdf", "filename": "tea-guide.pdf"},
	}, got["sources"])
	require.Equal(t, []any{map[string]any{"url": "data:image/png;base64,iVBORw0KGgo=", "media_type": "image/png"}}, got["files"])
	require.NotContains(t, got, "approvals", "none came")

	_, out, _ = trickle(t, "", "replay", filepath.Join(recordingsDir, "ag-ui-interrupt.sse"))
	got = nil
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, "ag-ui", got["dialect"])
	require.Equal(t, "interrupt", got["finish_reason"])
	require.Equal(t, []any{map[string]any{"id": "int_1", "tool_call_id": "call_book_1", "reason": "tool_approval",
		"message": "Book a table for 2 at Chez Nous?"}}, got["approvals"])
	require.NotContains(t, got, "sources", "none came")

	_, out, _ = trickle(t, "", "replay", filepath.Join(recordingsDir, "gemini-citations.sse"))
	got = nil
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, []any{
		map[string]any{"source": float64(1), "end": float64(69), "quote": "Green tea tastes best brewed at 70–80 °C for two to three minutes."},
		map[string]any{"source": float64(2), "end": float64(126), "quote": "Boiling water draws out catechins, which make it bitter."},
	}, got["citations"])
}

func TestReplaySSEPrintsEventsRetryAndEOF(t *testing.T) {
	code, out, _ := trickle(t, "", "replay", "--sse", filepath.Join(recordingsDir, "relay-stopped.sse"))
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 6)
	require.JSONEq(t, `{"retry":3000}`, lines[0])
	var ev struct {
		Type, Data  string
		LastEventID string `json:"lastEventId"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &ev))
	require.Equal(t, "message", ev.Type)
	require.Equal(t, "s1:1", ev.LastEventID)
	require.Contains(t, ev.Data, `"chat.completion.chunk"`)
	require.NoError(t, json.Unmarshal([]byte(lines[4]), &ev))
	require.Equal(t, "trickle.status", ev.Type)
	require.JSONEq(t, `{"status":"stopped","message":"stopped by the user"}`, ev.Data)
	require.JSONEq(t, `{"eof":true,"lastEventId":"s1:4"}`, lines[5])
}

func TestReplaySSESaysWhenTheStreamEndedMidEvent(t *testing.T) {
	_, out, _ := trickle(t, "", "replay", "--sse", filepath.Join(recordingsDir, "openai-truncated.sse"))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var eof map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &eof))
	require.Equal(t, true, eof["eof"])
	require.Contains(t, eof["incomplete"], "middle of an event")
}

func TestReplayReadsStandardInput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(recordingsDir, "plain.sse"))
	require.NoError(t, err)
	code, out, _ := trickle(t, string(data), "replay", "-", "--chunk", "3")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"text": "Plain text, no frills."`)
}

func TestReplayDialectFlagOverridesDetection(t *testing.T) {
	_, out, _ := trickle(t, "", "replay", "--dialect", "anthropic", filepath.Join(recordingsDir, "plain.sse"))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, "anthropic", got["dialect"])
	// Not one of its events reads as anthropic: nothing could be read,
	// which is no cut answer.
	require.Equal(t, "failed", got["status"])
	require.Contains(t, fmt.Sprint(got["error"]), "cannot read the response")
	require.Equal(t, float64(4), got["skipped"])
}

func TestReplayKeepsMarkupUnescaped(t *testing.T) {
	_, out, _ := trickle(t, "data: {\"delta\":\"<b>&</b>\"}\n\ndata: [DONE]\n\n", "replay", "-")
	require.Contains(t, out, `"text": "<b>&</b>"`)
}

func TestReplayUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no file", []string{"replay"}, 2, "exactly one FILE"},
		{"two files", []string{"replay", "a", "b"}, 2, "exactly one FILE"},
		{"an unknown dialect", []string{"replay", "--dialect", "klingon", "x"}, 2, "unknown dialect"},
		{"a negative chunk", []string{"replay", "--chunk", "-1", "x"}, 2, "--chunk"},
		{"a missing file", []string{"replay", "/nonexistent/recording.sse"}, 1, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := trickle(t, "", c.args...)
			require.Equal(t, c.code, code)
			require.Contains(t, stderr, c.msg)
		})
	}
}

// The relay's own streams (recorded with curl from `trickle serve`, canned
// answer "short"): ids on every event, a retry field, a comment first, and
// Ollama's lines carried as SSE events.
func TestReplayOfTheRelaysStreamsGivesItsCannedAnswer(t *testing.T) {
	// The recordings were made of the answer that is now "code".
	want, err := os.ReadFile("../../relay/sim/answers/code.md")
	require.NoError(t, err, "the relay's canned answer is part of the repository")
	for _, d := range []string{"anthropic", "ollama", "gemini", "responses"} {
		t.Run(d, func(t *testing.T) {
			f := filepath.Join("testdata", "relay-"+d+".sse")
			var got map[string]any
			_, out, _ := trickle(t, "", "replay", "--chunk", "5", f)
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Equal(t, d, got["dialect"])
			require.Equal(t, "complete", got["status"])
			require.Equal(t, string(want), got["text"])
			require.Regexp(t, `^[a-z0-9]+:\d+$`, got["last_event_id"])
			require.Equal(t, float64(0), got["skipped"])
		})
	}
}

func TestReplaySSEReportsADroppedEventTheSameWhateverTheChunkSize(t *testing.T) {
	in := "data: " + strings.Repeat("x", 1<<20+10) + "\n\ndata: after\n\n"
	_, whole, _ := trickle(t, in, "replay", "--sse", "-")
	lines := strings.Split(strings.TrimSuffix(whole, "\n"), "\n")
	require.Len(t, lines, 3)
	require.Contains(t, lines[0], `"error":"event dropped: larger than 1048576 bytes`)
	require.JSONEq(t, `{"type":"message","data":"after","lastEventId":""}`, lines[1])
	for _, n := range []string{"1000", "4096"} {
		_, got, _ := trickle(t, in, "replay", "--sse", "--chunk", n, "-")
		require.Equal(t, whole, got, "--chunk %s", n)
	}
}
