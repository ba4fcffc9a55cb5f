package cors

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllowedLetsInTheSameOriginAndListedOnesOnly(t *testing.T) {
	list := []string{"https://app.example/", "HTTPS://Admin.Example"}
	for _, tc := range []struct {
		name, host, origin string
		list               []string
		want               bool
	}{
		{"no origin: not a browser, or a same-origin GET", "relay.example", "", nil, true},
		{"the relay's own origin", "relay.example:8080", "http://relay.example:8080", nil, true},
		{"the relay's own origin in another case", "Relay.Example", "https://relay.example", nil, true},
		{"a listed origin, the list's trailing slash ignored", "relay.example", "https://app.example", list, true},
		{"a listed origin in another case", "relay.example", "https://admin.example", list, true},
		{"an origin not listed", "relay.example", "https://evil.example", list, false},
		{"the same host on another port", "relay.example:8080", "http://relay.example:9090", nil, false},
		{"a listed origin's subdomain", "relay.example", "https://x.app.example", list, false},
		{"any origin under *", "relay.example", "https://evil.example", []string{"*"}, true},
		{"the null origin", "relay.example", "null", list, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Allowed(tc.host, tc.origin, tc.list))
		})
	}
}

func TestAnswerLetsThePageReadTheAnswerAndVariesByOrigin(t *testing.T) {
	h := http.Header{"Vary": {"Accept-Encoding"}}
	Answer(h, "https://app.example", false)
	require.Equal(t, "https://app.example", h.Get("Access-Control-Allow-Origin"))
	require.Equal(t, []string{"Accept-Encoding", "Origin"}, h.Values("Vary"), "added, not replaced")
	require.Empty(t, h.Get("Access-Control-Allow-Credentials"))

	Answer(h, "https://app.example", true)
	require.Equal(t, "true", h.Get("Access-Control-Allow-Credentials"))
}

func TestPreflightNamesWhatTheAPITakesAndIsCachedTenMinutes(t *testing.T) {
	rec := httptest.NewRecorder()
	Preflight(rec)
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, "600", rec.Header().Get("Access-Control-Max-Age"))
	for _, m := range []string{"GET", "POST", "DELETE", "OPTIONS"} {
		require.Contains(t, rec.Header().Get("Access-Control-Allow-Methods"), m)
	}
	for _, h := range []string{"Content-Type", "Authorization", "Last-Event-ID", "X-Trickle-Resume"} {
		require.Contains(t, rec.Header().Get("Access-Control-Allow-Headers"), h)
	}
}

func TestExposeLetsThePageReadTheRelaysOwnHeaders(t *testing.T) {
	h := http.Header{}
	Expose(h)
	for _, name := range []string{"X-Trickle-Stream", "X-Trickle-Stream-URL", "X-Request-Id", "Retry-After"} {
		require.Contains(t, h.Get("Access-Control-Expose-Headers"), name)
	}
}
