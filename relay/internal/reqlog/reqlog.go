// Package reqlog is the relay's request log: one line per request, and a
// bounded memory of what was logged once.
package reqlog

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base32"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/wire"
)

type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int64
}

// Hijack records that the connection was taken over (SSE on a hijacked
// connection, WebSocket) for the request log.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.code == 0 {
		w.code = http.StatusOK
		if w.Header().Get("Upgrade") != "" {
			w.code = http.StatusSwitchingProtocols
		}
	}
	return c, brw, err
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush, SetWriteDeadline and
// Hijack on the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Header is the response header that carries the request id.
const Header = wire.HeaderRequestID

type idKey struct{}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID makes a request id: "req_" and 16 random base32 characters.
func NewID() string {
	var b [10]byte
	rand.Read(b[:])
	return "req_" + idEncoding.EncodeToString(b[:])
}

// ID is the id Handler gave the request whose context ctx is ("" outside
// Handler).
func ID(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}

// Handler logs every request: at info for the API, warn for a server
// error, debug for the rest, with the status, bytes, duration, stream and
// request id. Every request gets an id (NewID), in its context (ID) and
// in the response's X-Request-Id header: what a client is told of a
// failure names it, and the relay's log lines about it carry it.
func Handler(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := NewID()
		w.Header().Set(Header, id)
		r = r.WithContext(context.WithValue(r.Context(), idKey{}, id))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			lvl := slog.LevelDebug
			if sw.code >= 500 {
				lvl = slog.LevelWarn
			} else if strings.HasPrefix(r.URL.Path, "/v1/") {
				lvl = slog.LevelInfo
			}
			log.Log(r.Context(), lvl, "request", "method", r.Method, "path", r.URL.Path, "status", sw.code,
				"bytes", sw.bytes, "duration", time.Since(start).Round(time.Microsecond), "stream", sw.Header().Get(wire.HeaderStream), "request_id", id)
		}()
		next.ServeHTTP(sw, r)
	})
}

// maxOnce bounds the memory of what Once saw: past it, new keys are no
// longer logged (a flood of made-up origins cannot grow the relay).
const maxOnce = 1024

// Once remembers which keys (refused origins) were logged.
type Once struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// First reports whether key comes for the first time and still within the
// bound.
func (o *Once) First(origin string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.seen[origin]; ok || len(o.seen) >= maxOnce {
		return false
	}
	if o.seen == nil {
		o.seen = map[string]struct{}{}
	}
	o.seen[origin] = struct{}{}
	return true
}
