package apierr_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/wire"
)

// body reads an answer the way an OpenAI SDK does: the error object.
func body(t *testing.T, rec *httptest.ResponseRecorder) wire.BodyError {
	t.Helper()
	var b struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b), rec.Body.String())
	out, _ := json.Marshal(b.Error)
	var e wire.BodyError
	require.NoError(t, json.Unmarshal(out, &e))
	return e
}

// A refusal is answered with its type's status (or its own), its
// Retry-After, never cached, with the request's id in the body where the
// SDKs read it.
func TestARefusalIsAnsweredWithItsStatusRetryAfterAndRequestID(t *testing.T) {
	for _, c := range []struct {
		e      wire.Error
		status int
		retry  string
	}{
		{wire.Error{Type: wire.TypeInvalidRequest, Code: wire.CodeModelNotAllowed, Param: "model", Message: "relay: no"}, 400, ""},
		{wire.Error{Type: wire.TypeInvalidRequest, Status: 413, Message: "relay: too big"}, 413, ""},
		{wire.Error{Type: wire.TypeRateLimit, Code: wire.CodeRateLimited, RetryAfter: 30, Message: "relay: slow down"}, 429, "30"},
		{wire.Error{Type: wire.TypeShuttingDown, RetryAfter: 5, Message: "relay: shutting down"}, 503, "5"},
		{wire.Error{Type: wire.TypeStreamExpired, Message: "relay: gone"}, 410, ""},
		{wire.Error{Type: "something_new", Message: "relay: ?"}, 500, ""},
	} {
		rec := httptest.NewRecorder()
		rec.Header().Set(reqlog.Header, "req_abc")
		apierr.Write(rec, c.e)
		require.Equal(t, c.status, rec.Code, c.e.Type)
		require.Equal(t, c.retry, rec.Header().Get("Retry-After"), c.e.Type)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		got := body(t, rec)
		require.Equal(t, wire.BodyError{Message: c.e.Message, Type: c.e.Type, Code: c.e.Code, Param: c.e.Param, RequestID: "req_abc"}, got)
	}
}

// Fields a refusal does not have are left out of the body, not sent
// empty.
func TestAnEmptyCodeParamOrRequestIDIsLeftOut(t *testing.T) {
	rec := httptest.NewRecorder()
	apierr.Write(rec, wire.Error{Type: wire.TypeNotFound, Message: "relay: no route"})
	require.JSONEq(t, `{"error":{"message":"relay: no route","type":"not_found"}}`, rec.Body.String())
}

type limitRefusal struct{ retry int }

func (l *limitRefusal) Error() string { return "over the limit" }
func (l *limitRefusal) Refusal() wire.Error {
	return wire.Error{Type: wire.TypeRateLimit, Code: wire.CodeTooManyStreams, RetryAfter: l.retry, Message: "ignored"}
}

// Of finds the first refusal in an error's chain, however deep and
// however joined, and words it with the whole error's message; an error
// without one is the relay's own.
func TestOfFindsTheRefusalAnErrorCarries(t *testing.T) {
	bad := &wire.Error{Type: wire.TypeInvalidRequest, Message: "relay: bad request"}
	for _, c := range []struct {
		err  error
		want wire.Error
	}{
		{bad, wire.Error{Type: wire.TypeInvalidRequest, Message: "relay: bad request"}},
		{fmt.Errorf("%w: drop_after=%q is not a number", bad, "x"),
			wire.Error{Type: wire.TypeInvalidRequest, Message: `relay: bad request: drop_after="x" is not a number`}},
		{fmt.Errorf("starting: %w", fmt.Errorf("admitting: %w", &limitRefusal{retry: 3})),
			wire.Error{Type: wire.TypeRateLimit, Code: wire.CodeTooManyStreams, RetryAfter: 3, Message: "starting: admitting: over the limit"}},
		{errors.Join(errors.New("first"), &limitRefusal{retry: 1}),
			wire.Error{Type: wire.TypeRateLimit, Code: wire.CodeTooManyStreams, RetryAfter: 1, Message: "first\nover the limit"}},
	} {
		got, ok := apierr.Of(c.err)
		require.True(t, ok, "%v", c.err)
		require.Equal(t, c.want, got, "%v", c.err)
	}
	_, ok := apierr.Of(errors.New("relay: redis said no at 10.0.0.3"))
	require.False(t, ok, "an error that carries no refusal is the relay's own")
	_, ok = apierr.Of(nil)
	require.False(t, ok)
}

// The relay's own failure names the request and nothing else: the error,
// which may name a secret or an address, stays in the log.
func TestTheRelaysOwnFailureNamesOnlyTheRequest(t *testing.T) {
	e := apierr.Internal("req_42")
	require.Equal(t, wire.TypeServer, e.Type)
	require.Equal(t, http.StatusInternalServerError, e.HTTPStatus())
	require.Contains(t, e.Message, "req_42")
	require.Contains(t, e.Message, "the relay's log has the details")
	require.Equal(t, wire.StatusFailed, e.StreamStatus())
	require.Equal(t, "stream s1 is gone: it expired or never existed here; send the request again", apierr.Gone("s1"))
}

func TestJSONAnswers200NeverCached(t *testing.T) {
	rec := httptest.NewRecorder()
	apierr.JSON(rec, wire.Info{ID: "s", State: wire.StateRunning, Events: 3})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var in wire.Info
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &in))
	require.Equal(t, wire.StateRunning, in.State)
	require.Equal(t, 3, in.Events)
}
