package relay_test

// The hostile-client suite: clients that try to spend the operator's key
// in ways the operator did not allow, against a relay in front of a
// recording upstream (a real HTTP server on loopback that keeps every
// request it receives). Each refusal is checked for its status and body,
// and the recording for what must never have reached the model. The
// limits per identity (rate, generations at once, tokens per day, also
// across a fleet) are in peridentity_test.go.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/stream"
)

// recording is a model API on loopback that answers every request with a
// short OpenAI stream and keeps what it received.
type recording struct {
	url string

	mu       sync.Mutex
	received []map[string]json.RawMessage
}

func newRecording(t *testing.T) *recording {
	t.Helper()
	rec := &recording{}
	evs := simEvents("openai", "short")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		rec.mu.Lock()
		rec.received = append(rec.received, body)
		rec.mu.Unlock()
		play(w, r, "text/event-stream", evs, 0)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	rec.url = ts.URL
	return rec
}

// requests returns the bodies received so far.
func (rec *recording) requests() []map[string]json.RawMessage {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), rec.received...)
}

// guarded starts a relay in front of rec with opts.
func guarded(t *testing.T, rec *recording, opts ...relay.Option) string {
	t.Helper()
	u := relay.Upstream{URL: rec.url, Dialect: "openai", Key: "sk-operator",
		FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, TotalTimeout: 10 * time.Second}
	_, base := start(t, append([]relay.Option{relay.WithUpstream(u)}, opts...)...)
	return base
}

// refusal is the JSON error body of a refused request.
type refusal struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
		Param   string `json:"param"`
	} `json:"error"`
}

func refusalOf(t *testing.T, resp *http.Response, status int) refusal {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "%s", body)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var r refusal
	require.NoError(t, json.Unmarshal(body, &r), "%s", body)
	require.NotEmpty(t, r.Error.Message)
	require.NotContains(t, string(body), "sk-operator")
	return r
}

// completes posts a streaming request and requires a complete answer.
func completes(t *testing.T, url, body string, hdr ...string) {
	t.Helper()
	resp := post(t, url, body, hdr...)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	a := answerOf(t, "openai", b)
	require.Equal(t, stream.Complete, a.Status(), "%v", a.Err())
}

var authSecret = []byte("0123456789abcdef0123456789abcdef-test")

func mint(t *testing.T, sub string, ttl time.Duration) string {
	t.Helper()
	tok, err := relay.MintToken(authSecret, sub, ttl)
	require.NoError(t, err)
	return tok
}

func signed(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	require.NoError(t, err)
	return tok
}

func TestTokensThatAreNotTheOperatorsAreRefusedSayingWhyAndReachNothing(t *testing.T) {
	rec := newRecording(t)
	base := guarded(t, rec, relay.WithAuthSecret(authSecret))
	now := time.Now()
	live := jwt.MapClaims{"sub": "mallory", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	good := mint(t, "alice", time.Minute)
	parts := strings.Split(good, ".")
	admin, _ := json.Marshal(map[string]any{"sub": "admin", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()})
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(admin) + "." + parts[2]

	for _, c := range []struct {
		name, header, code string
	}{
		{"no token at all (curl, no Origin)", "", "token_missing"},
		{"a token that is not a JWT", "Bearer not-a-jwt", "token_malformed"},
		{"a forged payload", "Bearer " + forged, "token_bad_signature"},
		{"a foreign secret", "Bearer " + signed(t, jwt.SigningMethodHS256, []byte("another relay's secret, long enough"), live), "token_bad_signature"},
		{"expired", "Bearer " + signed(t, jwt.SigningMethodHS256, authSecret, jwt.MapClaims{"sub": "alice", "exp": now.Add(-time.Minute).Unix()}), "token_expired"},
		{"alg none", "Bearer " + signed(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, live), "token_alg_none"},
		{"another algorithm", "Bearer " + signed(t, jwt.SigningMethodHS384, authSecret, live), "token_algorithm"},
		{"no expiry", "Bearer " + signed(t, jwt.SigningMethodHS256, authSecret, jwt.MapClaims{"sub": "alice"}), "token_no_expiry"},
		{"no subject", "Bearer " + signed(t, jwt.SigningMethodHS256, authSecret, jwt.MapClaims{"exp": now.Add(time.Minute).Unix()}), "token_no_subject"},
		{"the shared-token style", "Bearer s3cret", "token_malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.header != "" {
				hdr = []string{"Authorization", c.header}
			}
			resp := post(t, base+"/v1/chat/completions", hello, hdr...)
			r := refusalOf(t, resp, http.StatusUnauthorized)
			require.Equal(t, c.code, r.Error.Code, r.Error.Message)
			require.Equal(t, "authentication_error", r.Error.Type)
			require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")

			// The WebSocket's access_token is checked the same way.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			q := ""
			if tok, ok := strings.CutPrefix(c.header, "Bearer "); ok {
				q = "?access_token=" + tok
			}
			_, hs, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws"+q, nil)
			require.Error(t, err)
			r = refusalOf(t, hs, http.StatusUnauthorized)
			require.Equal(t, c.code, r.Error.Code, r.Error.Message)
		})
	}
	require.Empty(t, rec.requests(), "a refused token reached the upstream")

	// The streams' other endpoints need a token too.
	for _, path := range []string{"/v1/streams/x", "/v1/streams/x/info"} {
		require.Equal(t, http.StatusUnauthorized, get(t, base+path).StatusCode, path)
	}
	require.Equal(t, http.StatusUnauthorized, del(t, base+"/v1/streams/x").StatusCode)
	require.Equal(t, http.StatusOK, get(t, base+"/healthz").StatusCode, "health checks need no token")

	// The operator's own token passes, on both transports.
	completes(t, base+"/v1/chat/completions", hello, "Authorization", "Bearer "+good)
	c := wsDial(t, base, "?access_token="+good, hello)
	msgs, err := wsMessages(t, c)
	require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "%v", msgs)
	require.Len(t, rec.requests(), 2)
}

func TestAuthSecretsThatCannotWorkAreRefusedByName(t *testing.T) {
	_, err := relay.New(relay.WithAuthSecret([]byte("short")))
	require.ErrorIs(t, err, relay.ErrBadOption)
	require.ErrorContains(t, err, "WithAuthSecret(")
	_, err = relay.New(relay.WithAuthSecret(authSecret), relay.WithToken("s3cret"))
	require.ErrorContains(t, err, "WithAuthSecret(")
}

func TestOnlyWhatTheOperatorAllowsReachesTheUpstream(t *testing.T) {
	rec := newRecording(t)
	base := guarded(t, rec, relay.WithModels("small", "medium"), relay.WithMaxTokens(500), relay.WithMaxInputChars(2000))
	chat := base + "/v1/chat/completions"
	user := func(extra string) string {
		return `{"stream":true,"messages":[{"role":"user","content":"hello"}]` + extra + `}`
	}

	for _, c := range []struct {
		name, body, code, param, says string
	}{
		{"a model not allowed", user(`,"model":"o1-pro"`), "model_not_allowed", "model", `"small", "medium"`},
		{"a huge max_tokens", user(`,"model":"small","max_tokens":100000`), "max_tokens_over_cap", "max_tokens", "cap of 500"},
		{"a huge max_completion_tokens", user(`,"max_completion_tokens":501`), "max_tokens_over_cap", "max_completion_tokens", "cap of 500"},
		{"a long conversation", `{"stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("a", 2001) + `"}]}`, "input_too_long", "messages", "limit of 2000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := refusalOf(t, post(t, chat, c.body), http.StatusBadRequest)
			require.Equal(t, c.code, r.Error.Code)
			require.Equal(t, c.param, r.Error.Param)
			require.Equal(t, "invalid_request_error", r.Error.Type)
			require.Contains(t, r.Error.Message, c.says)

			// The WebSocket's request is held to the same rules.
			msgs, _ := wsMessages(t, wsDial(t, base, "", c.body))
			require.Len(t, msgs, 1)
			require.Contains(t, msgs[0], "event: "+relay.StatusEvent)
			require.Contains(t, msgs[0], strings.ReplaceAll(c.says, `"`, `\"`))
		})
	}
	require.Empty(t, rec.requests(), "a refused request reached the upstream")

	// Unknown fields, at the top and in a message, never reach it; the
	// known ones do, and the cap is sent when the request names none.
	completes(t, chat, `{"stream":true,"model":"medium","temperature":0.5,"n":8,"logprobs":true,"service_tier":"priority",
		"store":true,"x_internal":{"admin":true},"messages":[{"role":"user","content":"hello","secret":"x"}]}`)
	c := wsDial(t, base, "", `{"temperature":0.25,"n":4,"messages":[{"role":"user","content":"hello"}]}`)
	_, err := wsMessages(t, c)
	require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err))
	completes(t, chat, user(`,"model":"small","max_completion_tokens":20`))
	got := rec.requests()
	require.Len(t, got, 3)
	for _, body := range got {
		for k := range body {
			require.Contains(t, relay.RequestFields(), k, "the upstream received the field %q", k)
		}
		var msgs []map[string]any
		require.NoError(t, json.Unmarshal(body["messages"], &msgs))
		for _, m := range msgs {
			for k := range m {
				require.Contains(t, relay.MessageFields(), k, "the upstream received the message field %q", k)
			}
		}
	}
	require.JSONEq(t, `"medium"`, string(got[0]["model"]))
	require.JSONEq(t, `0.5`, string(got[0]["temperature"]))
	require.JSONEq(t, `500`, string(got[0]["max_tokens"]), "the cap, sent when the request named none")
	require.JSONEq(t, `"small"`, string(got[1]["model"]), "no model named: the first allowed")
	require.JSONEq(t, `0.25`, string(got[1]["temperature"]))
	require.JSONEq(t, `20`, string(got[2]["max_completion_tokens"]))
	require.NotContains(t, got[2], "max_tokens")
}

func TestTheSimulatedModelIsHeldToTheSameCap(t *testing.T) {
	_, base := start(t, relay.WithMaxTokens(3), relay.WithModels("trickle-sim"))
	resp := post(t, base+"/v1/chat/completions?answer=sample-20k", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	require.Contains(t, string(b), `"finish_reason":"length"`, "the cap cut the answer")
	require.Contains(t, string(b), `"model":"trickle-sim"`)
	r := refusalOf(t, post(t, base+"/v1/chat/completions", `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`), http.StatusBadRequest)
	require.Equal(t, "model_not_allowed", r.Error.Code, "stream:false too")
}

func TestPolicyOptionsThatCannotWorkAreRefusedByName(t *testing.T) {
	for _, c := range []struct {
		option string
		opt    relay.Option
	}{
		{"WithModels", relay.WithModels()},
		{"WithModels", relay.WithModels("a", "")},
		{"WithMaxTokens", relay.WithMaxTokens(0)},
		{"WithMaxInputChars", relay.WithMaxInputChars(-1)},
	} {
		_, err := relay.New(c.opt)
		require.ErrorIs(t, err, relay.ErrBadOption)
		require.ErrorContains(t, err, c.option+"(")
	}
}

// Issue 36's reproduction: about 300 KB in any field that carries text
// (not only the messages' text) under a 200-character bound is refused on
// both transports, and the upstream receives none of it; unknown keys
// inside content parts never reach it.
func TestTheInputBoundCountsEveryFieldThatReachesTheModel(t *testing.T) {
	rec := newRecording(t)
	base := guarded(t, rec, relay.WithMaxInputChars(200))
	chat := base + "/v1/chat/completions"
	q, _ := json.Marshal(strings.Repeat("x", 300<<10))
	big := string(q)
	hi := `{"role":"user","content":"hi"}`
	for _, c := range []struct{ field, body string }{
		{"tools", `{"stream":true,"tools":[{"type":"function","function":{"name":"f","description":` + big + `}}],"messages":[` + hi + `]}`},
		{"response_format", `{"stream":true,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"description":` + big + `}}},"messages":[` + hi + `]}`},
		{"stop", `{"stream":true,"stop":` + big + `,"messages":[` + hi + `]}`},
		{"user", `{"stream":true,"user":` + big + `,"messages":[` + hi + `]}`},
		{"name", `{"stream":true,"messages":[{"role":"user","name":` + big + `,"content":"hi"}]}`},
		{"tool_call_id", `{"stream":true,"messages":[` + hi + `,{"role":"tool","tool_call_id":` + big + `,"content":"ok"}]}`},
		{"a content part's key", `{"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi","image_url":{"url":` + big + `}}]}]}`},
	} {
		t.Run(c.field, func(t *testing.T) {
			r := refusalOf(t, post(t, chat, c.body), http.StatusBadRequest)
			require.Equal(t, "input_too_long", r.Error.Code)
			require.Contains(t, r.Error.Message, "limit of 200")
			msgs, _ := wsMessages(t, wsDial(t, base, "", c.body))
			require.Len(t, msgs, 1)
			require.Contains(t, msgs[0], "limit of 200")
		})
	}
	require.Empty(t, rec.requests(), "a request over the bound reached the upstream")

	// A content part's unknown keys are dropped; the request then passes.
	completes(t, chat, `{"stream":true,"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi","secret":"s","cache_control":{"type":"ephemeral"}}]}]}`)
	got := rec.requests()
	require.Len(t, got, 1)
	require.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`, string(got[0]["messages"]))
}

// --auth-audience and --auth-issuer: a JWT without the matching aud or
// iss is 401 with a code and a reason naming the claim.
func TestTokensForAnotherAudienceOrIssuerAreRefused(t *testing.T) {
	_, base := startMemory(t, relay.WithAuthSecret(authSecret), relay.WithAuthAudience("trickle"), relay.WithAuthIssuer("backend"))
	token := func(aud, iss string) string {
		c := jwt.RegisteredClaims{Subject: "alice", Issuer: iss, IssuedAt: jwt.NewNumericDate(time.Now()), ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Minute))}
		if aud != "" {
			c.Audience = jwt.ClaimStrings{aud}
		}
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(authSecret)
		require.NoError(t, err)
		return s
	}
	chat := base + "/v1/chat/completions"
	for _, c := range []struct{ name, token, code, says string }{
		{"a token minted without aud or iss", mint(t, "alice", time.Minute), "token_audience", `accepts only tokens for "trickle"`},
		{"another audience", token("billing", "backend"), "token_audience", `its "aud" is "billing"`},
		{"another issuer", token("trickle", "elsewhere"), "token_issuer", `issued by "backend"`},
		{"no issuer", token("trickle", ""), "token_issuer", `its "iss" is missing`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := refusalOf(t, post(t, chat, hello, "Authorization", "Bearer "+c.token), http.StatusUnauthorized)
			require.Equal(t, "authentication_error", r.Error.Type)
			require.Equal(t, c.code, r.Error.Code)
			require.Contains(t, r.Error.Message, c.says)
		})
	}
	completes(t, chat, hello, "Authorization", "Bearer "+token("trickle", "backend"))

	for _, opts := range [][]relay.Option{
		{relay.WithAuthAudience("trickle")},
		{relay.WithAuthSecret(authSecret), relay.WithAuthIssuer("")},
	} {
		_, err := relay.New(opts...)
		require.ErrorIs(t, err, relay.ErrBadOption)
	}
}
