package relay_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// as sends a request with a bearer token.
func as(t *testing.T, method, url, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// notOwned checks a refusal of another identity: 403 in the relay's words.
func notOwned(t *testing.T, resp *http.Response, id string) {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", b)
	var e struct {
		Error struct{ Type, Code, Message string }
	}
	require.NoError(t, json.Unmarshal(b, &e), "%s", b)
	require.Equal(t, "permission_error", e.Error.Type)
	require.Equal(t, "stream_not_owned", e.Error.Code)
	require.Contains(t, e.Error.Message, "stream "+id+" was started with another token's identity")
}

// ownedStream starts a long stream as alice on base and returns its id.
func ownedStream(t *testing.T, base, alice string) string {
	t.Helper()
	resp := post(t, base+"/v1/chat/completions?answer=sample-20k&gap_ms=20", hello, "Authorization", "Bearer "+alice, relay.ResumeHeader, "on")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id := resp.Header.Get("X-Trickle-Stream")
	require.NotEmpty(t, id)
	return id
}

// checkOwnership holds the issue-36 finding: with auth, another sub could
// read, inspect and stop someone's stream given its id. Bob, on bobsBase,
// gets 403 on every path; alice, on alicesBase, is served.
func checkOwnership(t *testing.T, id, alice, bob, alicesBase, bobsBase string) {
	t.Helper()
	stream := bobsBase + "/v1/streams/" + id
	notOwned(t, as(t, http.MethodGet, stream, bob), id)
	notOwned(t, as(t, http.MethodGet, stream+"/info", bob), id)
	notOwned(t, as(t, http.MethodDelete, stream, bob), id)

	msgs, _ := wsMessages(t, wsDial(t, bobsBase, "?access_token="+bob, fmt.Sprintf(`{"type":"resume","stream":%q,"last_event_id":""}`, id)))
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0], "event: "+relay.StatusEvent)
	require.Contains(t, msgs[0], "was started with another token's identity")

	require.Equal(t, relay.StateRunning, infoAs(t, alicesBase, id, alice).State, "bob's stop stopped nothing")
	r := as(t, http.MethodGet, alicesBase+"/v1/streams/"+id, alice)
	require.Equal(t, http.StatusOK, r.StatusCode, "alice resumes her own stream")
	require.Equal(t, http.StatusOK, as(t, http.MethodDelete, alicesBase+"/v1/streams/"+id, alice).StatusCode)
	eventually(t, "alice's stop", func() bool { return infoAs(t, alicesBase, id, alice).State == relay.StateStopped })
}

func TestAStreamIsItsCreatorsWhenAuthIsOn(t *testing.T) {
	_, base := startMemory(t, relay.WithAuthSecret(authSecret))
	alice, bob := mint(t, "alice", time.Minute), mint(t, "bob", time.Minute)
	checkOwnership(t, ownedStream(t, base, alice), alice, bob, base, base)
}

// In a fleet the stream's identity goes with its meta: bob is refused on
// the relay that follows it too.
func TestAStreamIsItsCreatorsAcrossAFleet(t *testing.T) {
	r := startRedis(t)
	pair := fleet(t, r, 2, relay.WithAuthSecret(authSecret))
	alice, bob := mint(t, "alice", time.Minute), mint(t, "bob", time.Minute)
	id := ownedStream(t, pair[0].base, alice)
	checkOwnership(t, id, alice, bob, pair[1].base, pair[1].base)
}

// Without auth a stream is anyone's who knows its id, as before.
func TestWithoutAuthAStreamIsAnyonesWhoKnowsItsID(t *testing.T) {
	_, base := startMemory(t)
	resp := post(t, base+"/v1/chat/completions?answer=sample-20k&gap_ms=20", hello, relay.ResumeHeader, "on")
	id := resp.Header.Get("X-Trickle-Stream")
	require.Equal(t, http.StatusOK, get(t, base+"/v1/streams/"+id+"/info").StatusCode)
}
