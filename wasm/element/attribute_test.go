package element

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/render"
)

// convert is render.Convert, the widget's oracle, for options the test
// knows are good.
func convert(tb testing.TB, text string, opts ...render.Option) string {
	tb.Helper()
	html, err := render.Convert(text, opts...)
	require.NoError(tb, err)
	return html
}

// newSession is NewSession for a Config the test knows is good.
func newSession(tb testing.TB, cfg Config) *Session {
	tb.Helper()
	s, err := NewSession(cfg)
	require.NoError(tb, err)
	return s
}

// An attribute whose value cannot work fails the call by its name, in
// trickle-error, opens nothing and leaves the answer in progress alone.
func TestABadAttributeFailsTheCallNamingTheAttribute(t *testing.T) {
	cases := []struct {
		name, extra, attribute, value, reason string
	}{
		{"an unknown dialect", `,"dialect":"klingon"`, "dialect", "klingon", "unknown dialect (want auto or one of openai"},
		{"an image origin that is no origin", `,"images":"https://ok.test cdn.test"`, "image-origins", "cdn.test", "not an origin (want scheme://host[:port])"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, p, e, gen := streaming(t)
			p.take(e)
			p.events, p.details = nil, nil
			e.Do(askCmd(t, 2, tc.extra), time.Time{}, nil)
			p.take(e)
			require.Equal(t, map[int]string{2: "failed"}, p.resolved, "the bad call fails; the first one is still running")
			require.Equal(t, []string{"trickle-error"}, p.events)
			require.Contains(t, p.details[0], `"message":"the `+tc.attribute+` attribute \"`+tc.value+`\": `+tc.reason)
			require.Len(t, env.opened, 1, "no connection for the bad call")
			require.True(t, e.current(gen), "the answer in progress keeps its connection")

			_, err := NewSession(command(t, `{"t":"ask","id":1,"n":1,"url":"`+origin+`/x"`+tc.extra+`}`).Config())
			var ae *AttributeError
			require.ErrorAs(t, attributeError(err), &ae)
			require.Equal(t, tc.attribute, ae.Attribute)
			require.Equal(t, tc.value, ae.Value)
		})
	}
}

// A stored answer shown with a bad attribute fails its call the same way.
func TestABadAttributeFailsAShowCall(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(command(t, `{"t":"show","id":1,"n":3,"url":"`+origin+`/x","dialect":"klingon","body":{"role":"assistant","content":"Hi"}}`), time.Time{}, nil)
	p.take(e)
	require.Equal(t, map[int]string{3: "failed"}, p.resolved)
	require.Equal(t, []string{"trickle-error"}, p.events)
	require.Contains(t, p.details[0], `the dialect attribute \"klingon\"`)
	require.False(t, e.Active())
}

func TestAGoodConfigMakesASession(t *testing.T) {
	for _, cfg := range []Config{{}, {Dialect: "auto"}, {Dialect: "plain", Announce: "off", ContentType: "text/plain"}} {
		_, err := NewSession(cfg)
		require.NoError(t, err)
	}
	// A file: page's origin is opaque: it serializes as "null", which is
	// no origin to allow images from, and no reason to refuse the page.
	cfg := command(t, `{"t":"ask","id":1,"n":1,"url":"http://127.0.0.1:1/x","origin":"null"}`).Config()
	require.Empty(t, cfg.Policy.SameOrigin)
	_, err := NewSession(cfg)
	require.NoError(t, err)
}
