package element

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/weburl"
)

// The widget read its URLs with net/url until internal/weburl took its
// place (issue 34, "Lighter"). These are the functions as they were, the oracle the
// new ones are held to.

func netOriginOf(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

func netSourceHost(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") {
		return ""
	}
	return strings.TrimPrefix(p.Hostname(), "www.")
}

func netStreamURLs(endpoint, id, ref string) (RelayURLs, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return RelayURLs{}, err
	}
	u.RawQuery, u.Fragment = "", ""
	if ref != "" {
		r, err := url.Parse(ref)
		if err == nil && r.Path != "" {
			s := u.ResolveReference(r)
			if s.Scheme == u.Scheme && s.Host == u.Host {
				s.RawQuery, s.Fragment = "", ""
				return RelayURLs{Resume: s.String(), Cancel: s.String()}, nil
			}
		}
	}
	base := u.Scheme + "://" + u.Host + apiPrefix(u.Path) + "/v1/streams/" + url.PathEscape(id)
	return RelayURLs{Resume: base, Cancel: base}, nil
}

func netResolveStreamRef(from, ref string) string {
	if ref == "" {
		return ""
	}
	b, err := url.Parse(from)
	if err != nil {
		return ""
	}
	r, err := url.Parse(ref)
	if err != nil || r.Path == "" {
		return ""
	}
	s := b.ResolveReference(r)
	s.RawQuery, s.Fragment = "", ""
	return s.String()
}

func netWebSocketURLs(endpoint, wsEndpoint, authorization string) (first, resume string, err error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", "", err
	}
	if wsEndpoint != "" {
		ws, err := u.Parse(wsEndpoint)
		if err != nil {
			return "", "", err
		}
		u = ws
	} else {
		u = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: apiPrefix(u.Path) + "/v1/ws", RawQuery: u.RawQuery}
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	r := *u
	r.RawQuery = ""
	if token, ok := strings.CutPrefix(strings.TrimSpace(authorization), "Bearer "); ok && token != "" {
		v := u.Query()
		v.Set("access_token", token)
		u.RawQuery = v.Encode()
		r.RawQuery = "access_token=" + url.QueryEscape(token)
	}
	return u.String(), r.String(), nil
}

// checkURLs holds the functions that read URLs to the net/url versions
// they replaced, on one base URL and one reference: each gives net/url's
// answer, or refuses (an error, "", the endpoint's own control URLs
// instead of a reference's) where the old one answered; none answers
// where the old one refused.
func checkURLs(t *testing.T, base, ref string) {
	t.Helper()
	// The functions built on it.
	if got := originOf(base); got != "" {
		require.Equal(t, netOriginOf(base), got, "originOf(%q)", base)
	}
	if got := sourceHost(base); got != "" {
		require.Equal(t, netSourceHost(base), got, "sourceHost(%q)", base)
	}
	if got := ResolveStreamRef(base, ref); got != "" {
		require.Equal(t, netResolveStreamRef(base, ref), got, "ResolveStreamRef(%q, %q)", base, ref)
	}
	for _, id := range []string{"s1", ref} {
		got, err := StreamURLs(base, id, ref)
		want, werr := netStreamURLs(base, id, ref)
		if werr != nil {
			require.Error(t, err, "StreamURLs(%q, %q, %q): net/url refuses it", base, id, ref)
		}
		if err == nil {
			if _, ok := weburl.Parse(ref); !ok {
				// A reference webURL does not read is no reference.
				want, _ = netStreamURLs(base, id, "")
			}
			require.Equal(t, want, got, "StreamURLs(%q, %q, %q)", base, id, ref)
		}
	}
	for _, auth := range []string{"", "Bearer t&k n"} {
		first, resume, err := WebSocketURLs(base, ref, auth)
		wfirst, wresume, werr := netWebSocketURLs(base, ref, auth)
		if werr != nil {
			require.Error(t, err, "WebSocketURLs(%q, %q): net/url refuses it", base, ref)
		}
		if err == nil {
			require.Equal(t, wfirst, first, "WebSocketURLs(%q, %q, %q)", base, ref, auth)
			require.Equal(t, wresume, resume, "WebSocketURLs(%q, %q, %q)", base, ref, auth)
		}
	}
}

// URLs as the page sends them (a browser's serialisation; the first 14,
// endpoints), the references a relay writes and the URLs providers cite.
var browserURLs = []string{
	"http://127.0.0.1:8080/v1/chat/completions?drop_after=3",
	"https://site.test/ai/v1/chat/completions",
	"https://site.test/a/b/v1/chat/completions#x",
	"http://localhost:3000/api/chat",
	"http://[::1]:8080/v1/chat/completions",
	"https://[2001:db8::7]/v1/chat",
	"https://h/v1/chat/completions?dialect=anthropic&drop_after=3",
	"https://h/v1/chat?q=a%20b&x=%C3%A9|{}",
	"wss://other.example/ws",
	"https://en.wikipedia.org/wiki/Tea_(drink)",
	"https://en.wikipedia.org/wiki/Caf%C3%A9?utm_source=openai",
	"https://www.example.com/it's/a*b,c;d=e:f@g$h&i+j!~",
	"https://xn--caf-dma.example/",
	"https://h:443",
	"../streams/s1",
	"s1",
	"/ai/v1/streams/abc-DEF_123",
	"//h2/ws",
	"/custom/ws?x=1",
	"?x=1",
	"#top",
}

func TestURLFunctionsAnswerAsNetURLDid(t *testing.T) {
	for _, s := range browserURLs {
		for _, base := range browserURLs {
			checkURLs(t, base, s)
		}
	}
	for _, s := range []string{
		"http://user:pw@h/", "mailto:a@b", "http:/x", "http:///x", "http://h:x/", "http://h:1:2/",
		"http://[::1.2.3.4]/", "http://[fe80::1%25en0]/", "http://a%41b/", "http://h/a b", "http://h/é",
		"http://h/a|b", "http://h/%zz", "http://h/#%", "a:b/c", "http://h/\x00", "http://h\n/", "1http://h/",
	} {
		checkURLs(t, s, s)
		checkURLs(t, browserURLs[0], s)
	}
	// The endpoints the page sends are read: Stop, resume and the
	// WebSocket work for each.
	for _, s := range browserURLs[:14] {
		_, err := StreamURLs(s, "s1", "../streams/s1")
		require.NoError(t, err, "%q", s)
		_, _, err = WebSocketURLs(s, "", "Bearer t")
		require.NoError(t, err, "%q", s)
		require.NotEmpty(t, originOf(s), "%q", s)
	}
	// A source's host is shown for any path net/url takes.
	require.Equal(t, "de.wikipedia.org", sourceHost("https://www.de.wikipedia.org/wiki/Café au lait"))
	require.Empty(t, sourceHost("https://h/%zz"), "net/url refuses it")
	_, err := StreamURLs("/v1/chat", "s1", "")
	require.ErrorContains(t, err, `the endpoint "/v1/chat" is not a URL the widget reads`)
}

// Random URLs from the pieces of every part, bounded in number;
// FuzzURLFunctions goes on from there.
func TestURLFunctionsAnswerAsNetURLDidOnRandomURLs(t *testing.T) {
	pieces := []string{"http:", "https:", "ws:", "//", "/", "/", "h", "[::1]", "[1::2::3]", ":", ":8080", "@", ".", "..", "./", "../",
		"a", "b:c", "%", "%2F", "%20", "%zz", "é", " ", "+", "?", "#", "&", "=", "x=1", "v1", "streams", "s1", "|", "*"}
	rng := rand.New(rand.NewPCG(34, 33))
	n := 10000
	if testing.Short() {
		n = 1000
	}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range n {
		base, ref := gen(), gen()
		if i%2 == 0 {
			base = browserURLs[rng.IntN(14)] + base
		}
		checkURLs(t, base, ref)
	}
}

func FuzzURLFunctions(f *testing.F) {
	for _, s := range browserURLs {
		f.Add("https://site.test/ai/v1/chat/completions?x=1#f", s)
		f.Add(s, "../streams/s1")
	}
	f.Fuzz(checkURLs)
}
