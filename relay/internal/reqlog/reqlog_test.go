package reqlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// lines is a JSON log the test reads back.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		out = append(out, m)
	}
	return out
}

func logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var idShape = regexp.MustCompile(`^req_[a-z2-7]{16}$`)

func TestEveryRequestGetsAnIDInItsContextAndItsAnswer(t *testing.T) {
	var out lines
	var seen string
	h := Handler(logger(&out), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = ID(r.Context())
		w.Header().Set("X-Trickle-Stream", "s1")
		io.WriteString(w, "hello")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
	id := rec.Header().Get(Header)
	require.Regexp(t, idShape, id)
	require.Equal(t, id, seen)

	recs := out.records(t)
	require.Len(t, recs, 1)
	r := recs[0]
	require.Equal(t, "INFO", r["level"], "the API is logged at info")
	require.Equal(t, "request", r["msg"])
	require.Equal(t, "POST", r["method"])
	require.Equal(t, "/v1/chat/completions", r["path"])
	require.EqualValues(t, 200, r["status"], "a write without WriteHeader is a 200")
	require.EqualValues(t, 5, r["bytes"])
	require.Equal(t, "s1", r["stream"])
	require.Equal(t, id, r["request_id"])
	require.Empty(t, ID(httptest.NewRequest(http.MethodGet, "/", nil).Context()), "no id outside the handler")
}

func TestTheLevelSaysWhatKindOfRequestItWas(t *testing.T) {
	for _, tc := range []struct {
		path   string
		status int
		level  string
	}{
		{"/v1/streams/s1", 404, "INFO"},
		{"/trickle.js", 200, "DEBUG"},
		{"/v1/chat/completions", 500, "WARN"},
		{"/healthz", 503, "WARN"},
	} {
		t.Run(fmt.Sprint(tc.path, " ", tc.status), func(t *testing.T) {
			var out lines
			h := Handler(logger(&out), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				w.WriteHeader(http.StatusTeapot) // a second status is not the one logged
			}))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tc.path, nil))
			r := out.records(t)[0]
			require.Equal(t, tc.level, r["level"])
			require.EqualValues(t, tc.status, r["status"])
		})
	}
}

func TestAHijackedConnectionIsLoggedAsTheProtocolItBecame(t *testing.T) {
	for _, tc := range []struct {
		name    string
		upgrade string
		want    float64
	}{{"SSE on the connection", "", 200}, {"a WebSocket", "websocket", 101}} {
		t.Run(tc.name, func(t *testing.T) {
			var out lines
			logged := make(chan struct{})
			h := Handler(logger(&out), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.upgrade != "" {
					w.Header().Set("Upgrade", tc.upgrade)
				}
				c, brw, err := http.NewResponseController(w).Hijack()
				require.NoError(t, err)
				brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				brw.Flush()
				c.Close()
			}))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				close(logged)
			}))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/v1/streams/s1")
			require.NoError(t, err)
			io.ReadAll(resp.Body)
			resp.Body.Close()
			<-logged
			recs := out.records(t)
			require.Len(t, recs, 1)
			require.Equal(t, tc.want, recs[0]["status"])
		})
	}
}

func TestIDsAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		require.Regexp(t, idShape, id)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestOnceSaysFirstOnceForEachKeyAndForgetsNothingPastItsBound(t *testing.T) {
	var o Once
	require.True(t, o.First("https://a.example"))
	require.False(t, o.First("https://a.example"))
	for i := 1; i < maxOnce; i++ {
		require.True(t, o.First(fmt.Sprint("https://", i, ".example")))
	}
	require.False(t, o.First("https://new.example"), "past the bound nothing new is remembered, nor logged")
	require.False(t, o.First("https://a.example"))
}
