package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/wire"
)

// The status event's data, as clients have read it since the relay first
// sent it: the status word, the message, and an OpenAI-style error whose
// code is the status word; the usage only when there is one.
func TestTheStatusEventsDataIsWhatClientsRead(t *testing.T) {
	b, err := json.Marshal(wire.NewStatusData(wire.StatusStopped, "stopped by the client", &wire.Usage{CompletionTokens: 12, Estimated: true}))
	require.NoError(t, err)
	require.JSONEq(t, `{"status":"stopped","message":"stopped by the client",
		"error":{"message":"stopped by the client","type":"trickle_status","code":"stopped"},
		"usage":{"completion_tokens":12,"estimated":true}}`, string(b))
	b, err = json.Marshal(wire.NewStatusData(wire.StatusGone, "gone", nil))
	require.NoError(t, err)
	require.JSONEq(t, `{"status":"gone","message":"gone","error":{"message":"gone","type":"trickle_status","code":"gone"}}`, string(b))
}

func TestEveryStatusWordIsKnownAndNothingElse(t *testing.T) {
	for _, s := range []wire.Status{wire.StatusStopped, wire.StatusFailed, wire.StatusGone, wire.StatusWithheld} {
		require.True(t, s.Known(), s)
	}
	for _, s := range []wire.Status{"", "complete", "running", "cancelled", "Stopped"} {
		require.False(t, s.Known(), s)
	}
	// The states a stream ends in by a client's or the relay's word are
	// written as the status word of its terminal event.
	for _, s := range []wire.State{wire.StateStopped, wire.StateFailed, wire.StateWithheld} {
		require.True(t, wire.Status(s).Known(), s)
	}
}

func TestEveryStateButRunningIsAnEnd(t *testing.T) {
	require.False(t, wire.StateRunning.Ended())
	for _, s := range []wire.State{wire.StateComplete, wire.StateStopped, wire.StateCancelled, wire.StateFailed, wire.StateWithheld} {
		require.True(t, s.Ended(), s)
	}
	require.False(t, wire.State("paused").Ended())
}

// Each type has one status, and each code one type.
func TestTypesHaveTheirStatusAndCodesTheirType(t *testing.T) {
	for typ, status := range map[wire.ErrorType]int{
		wire.TypeInvalidRequest: 400, wire.TypeAuthentication: 401, wire.TypeUnauthorized: 401,
		wire.TypeOriginNotAllowed: 403, wire.TypePermission: 403, wire.TypeNotFound: 404, wire.TypeStreamGone: 404,
		wire.TypeMethodNotAllowed: 405, wire.TypeStreamExpired: 410, wire.TypeRateLimit: 429,
		wire.TypeServer: 500, wire.TypeUpstream: 502, wire.TypeShuttingDown: 503,
		wire.TypeStoreUnavailable: 503, wire.TypeUnavailable: 503, "unheard_of": 500,
	} {
		require.Equal(t, status, typ.HTTPStatus(), typ)
		require.Equal(t, status, wire.Error{Type: typ}.HTTPStatus(), typ)
	}
	require.Equal(t, 413, wire.Error{Type: wire.TypeInvalidRequest, Status: 413}.HTTPStatus(), "a status of its own wins")
	for code, typ := range map[wire.Code]wire.ErrorType{
		wire.CodeModelNotAllowed: wire.TypeInvalidRequest, wire.CodeInvalidJSON: wire.TypeInvalidRequest,
		wire.CodeStreamRequired: wire.TypeInvalidRequest, wire.CodeRateLimited: wire.TypeRateLimit,
		wire.CodeTooManyStreams: wire.TypeRateLimit, wire.CodeTokenBudgetExhausted: wire.TypeRateLimit,
		wire.CodeMemoryFull: wire.TypeRateLimit, wire.CodeTooManyConnections: wire.TypeRateLimit,
		wire.CodeTokenExpired: wire.TypeAuthentication, wire.CodeTokenNoSubject: wire.TypeAuthentication,
		wire.CodeStreamNotOwned: wire.TypePermission, wire.CodeTokenAudience: wire.TypeAuthentication,
		wire.CodeTokenIssuer: wire.TypeAuthentication,
	} {
		require.Equal(t, typ, code.Type(), code)
	}
}

func TestAStreamingClientIsToldGoneOrFailed(t *testing.T) {
	require.Equal(t, wire.StatusGone, wire.Error{Type: wire.TypeStreamGone}.StreamStatus())
	require.Equal(t, wire.StatusGone, wire.Error{Type: wire.TypeStreamExpired}.StreamStatus())
	require.Equal(t, wire.StatusFailed, wire.Error{Type: wire.TypeRateLimit}.StreamStatus())
	require.Equal(t, "", wire.Error{}.RetryAfterHeader())
	require.Equal(t, "7", wire.Error{RetryAfter: 7}.RetryAfterHeader())
	e := &wire.Error{Type: wire.TypeShuttingDown, Message: "relay: shutting down"}
	var r wire.Refuser = e
	require.Equal(t, *e, r.Refusal())
	require.Equal(t, "relay: shutting down", r.Error())
}

// The WebSocket's messages, as the widget writes them.
func TestTheWebSocketsControlMessages(t *testing.T) {
	var m wire.WSControl
	require.NoError(t, json.Unmarshal([]byte(`{"type":"resume","stream":"s1","last_event_id":"s1:4"}`), &m))
	require.Equal(t, wire.WSControl{Type: wire.WSResume, Stream: "s1", LastEventID: "s1:4"}, m)
	b, err := json.Marshal(wire.WSControl{Type: wire.WSStop})
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"stop"}`, string(b))
}
