package relay_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/testlog"
	"github.com/trickle-dev/trickle/relay"
)

// upstreamSecret is in every error body the failing upstream sends: no
// client may ever read it.
const upstreamSecret = "Incorrect API key provided: sk-live-4242"

// failingUpstreams fail in the ways a real upstream does.
var failingUpstreams = []struct {
	name   string
	script upstreamScript
}{
	{"401 with a body", func(w http.ResponseWriter, r *http.Request, _ int) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"`+upstreamSecret+`","type":"invalid_request_error"}}`)
		return true
	}},
	{"500", func(w http.ResponseWriter, r *http.Request, _ int) bool {
		http.Error(w, "internal: "+upstreamSecret, http.StatusInternalServerError)
		return true
	}},
	{"cut mid-stream", func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if !play(w, r, "text/event-stream", simEvents("openai", "short")[:3], time.Millisecond) {
			return false
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // no terminating chunk: a broken answer
		}
		return true
	}},
	{"invalid JSON", func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", []string{"data: {\"choices\":[{\"delta\":\n\n", "data: not json at all\n\n"}, time.Millisecond)
	}},
}

var requestIDPattern = regexp.MustCompile(`req_[a-z2-7]{16}`)

// TestNothingInternalReachesAClient drives a failing upstream on a known
// loopback URL through every way a client can read the relay (SSE, the
// WebSocket, stream:false, the stream's info, a resume) and checks that
// the upstream's URL and its body reach the relay's log only, under the
// request id the client was given.
func TestNothingInternalReachesAClient(t *testing.T) {
	for _, c := range failingUpstreams {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.script)
			host := strings.TrimPrefix(f.url, "http://") // 127.0.0.1:port
			var logs testlog.Buffer
			u := relay.Upstream{URL: f.url + "/v1/chat/completions", Dialect: "openai", Key: "upstream-secret-key",
				FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, TotalTimeout: 10 * time.Second}
			_, base := start(t, relay.WithUpstream(u), relay.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))

			var seen []string // everything a browser could read
			clean := func(what, text string) {
				t.Helper()
				seen = append(seen, text)
				require.NotContains(t, text, host, "%s names the upstream", what)
				require.NotContains(t, text, upstreamSecret, "%s quotes the upstream's body", what)
				require.NotContains(t, text, "upstream-secret-key", what)
			}
			headers := func(what string, h http.Header) string {
				t.Helper()
				var b strings.Builder
				for k, v := range h {
					b.WriteString(k + ": " + strings.Join(v, ", ") + "\n")
				}
				clean(what+" headers", b.String())
				rid := h.Get("X-Request-Id")
				require.Regexp(t, requestIDPattern, rid, what)
				return rid
			}

			// SSE.
			resp := post(t, base+"/v1/chat/completions", hello)
			rid := headers("the SSE response", resp.Header)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			clean("the SSE stream", string(body))
			require.Contains(t, string(body), rid, "the failure names the request")
			require.Contains(t, string(body), `"error"`, "the stream ends with an error")
			id := resp.Header.Get("X-Trickle-Stream")
			in := info(t, base, id)
			require.Equal(t, relay.StateFailed, in.State)
			b, _ := json.Marshal(in)
			clean("the stream's info", string(b))

			// A resume replays the same end.
			rs := get(t, base+"/v1/streams/"+id, "Last-Event-ID", id+":0")
			headers("the resume", rs.Header)
			rb, err := io.ReadAll(rs.Body)
			require.NoError(t, err)
			clean("the resume", string(rb))

			// The WebSocket.
			ws := wsDial(t, base, "", hello)
			msgs, _ := wsMessages(t, ws)
			require.NotEmpty(t, msgs)
			clean("the WebSocket", strings.Join(msgs, ""))
			require.Regexp(t, requestIDPattern, strings.Join(msgs, ""))

			// stream:false.
			once := post(t, base+"/v1/chat/completions", strings.Replace(hello, `"stream":true`, `"stream":false`, 1))
			orid := headers("the stream:false answer", once.Header)
			ob, err := io.ReadAll(once.Body)
			require.NoError(t, err)
			clean("the stream:false answer", string(ob))
			if once.StatusCode != http.StatusOK {
				var e struct {
					Error struct {
						Message   string `json:"message"`
						RequestID string `json:"request_id"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal(ob, &e), "%s", ob)
				require.Equal(t, orid, e.Error.RequestID)
				require.NotEmpty(t, e.Error.Message)
			}

			// The operator's log has what the clients were not told, under
			// the same ids.
			ids := []string{rid}
			if once.StatusCode != http.StatusOK {
				// (A 200 whose body breaks off is copied as it came.)
				ids = append(ids, orid)
			}
			for _, id := range ids {
				var line string
				eventually(t, "the failure logged", func() bool { line = logLine(logs.String(), id, "upstream failed"); return line != "" })
				require.Contains(t, line, host, "the log names the upstream")
			}
			if strings.Contains(c.name, "401") || c.name == "500" {
				require.Contains(t, logs.String(), "sk-live-4242", "the log keeps the upstream's body")
			}
			require.NotEmpty(t, seen)
		})
	}
}

// logLine is the JSON log line with msg and request id rid ("" if none).
func logLine(logs, rid, msg string) string {
	for _, line := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg && m["request_id"] == rid {
			return line
		}
	}
	return ""
}

// A refusal's body names the request, as does its X-Request-Id header.
func TestErrorBodiesCarryTheRequestID(t *testing.T) {
	_, base := start(t, relay.WithMaxStreams(1))
	for _, c := range []struct {
		name string
		resp func() *http.Response
		code int
	}{
		{"bad request", func() *http.Response { return post(t, base+"/v1/chat/completions", `{"messages":[]}`) }, http.StatusBadRequest},
		{"no route", func() *http.Response { return get(t, base+"/v1/nothing") }, http.StatusNotFound},
		{"gone stream", func() *http.Response {
			return get(t, base+"/v1/streams/"+url.PathEscape("nosuch")+"/info")
		}, http.StatusNotFound},
	} {
		resp := c.resp()
		require.Equal(t, c.code, resp.StatusCode, c.name)
		var e struct {
			Error struct {
				Message   string `json:"message"`
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e), c.name)
		require.Regexp(t, requestIDPattern, e.Error.RequestID, c.name)
		require.Equal(t, resp.Header.Get("X-Request-Id"), e.Error.RequestID, c.name)
	}
}
