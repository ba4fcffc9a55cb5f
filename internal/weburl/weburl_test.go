package weburl

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// check holds Parse, ParseHost, Resolve, String and Hostname to net/url on
// a base URL and a reference: what net/url refuses is refused, and what is
// read is read, resolved and written back as net/url does.
func check(t *testing.T, base, ref string) {
	t.Helper()
	for _, s := range []string{base, ref} {
		want, err := url.Parse(s)
		for _, lax := range []bool{false, true} {
			got, ok := parse(s, lax)
			if err != nil {
				require.False(t, ok, "net/url refuses %q (%v), weburl reads it (lax %v)", s, err, lax)
				continue
			}
			if !ok {
				continue
			}
			require.Nil(t, want.User, "%q", s)
			require.Empty(t, want.Opaque, "%q", s)
			require.Equal(t, want.Scheme, got.Scheme, "%q", s)
			require.Equal(t, want.Host, got.Host, "%q", s)
			require.Equal(t, want.Hostname(), got.Hostname(), "%q", s)
			require.Equal(t, want.RawQuery, got.RawQuery, "%q", s)
			require.Equal(t, want.ForceQuery, got.ForceQuery, "%q", s)
			require.Equal(t, want.Fragment == "", got.Fragment == "", "%q", s)
			require.Equal(t, want.Path == "", got.Path == "", "%q", s)
			if lax {
				continue
			}
			require.Equal(t, want.EscapedPath(), got.Path, "%q", s)
			p, ok := Unescape(got.Path, false)
			require.True(t, ok)
			require.Equal(t, want.Path, p, "%q", s)
			require.Equal(t, want.EscapedFragment(), got.Fragment, "%q", s)
			if got.Absolute() {
				require.Equal(t, want.String(), got.String(), "%q", s)
			}
		}
	}
	if b, ok := Parse(base); ok && b.Absolute() {
		if r, ok := Parse(ref); ok {
			nb, err := url.Parse(base)
			require.NoError(t, err)
			nr, err := url.Parse(ref)
			require.NoError(t, err)
			require.Equal(t, nb.ResolveReference(nr).String(), b.Resolve(r).String(), "%q against %q", ref, base)
		}
	}
}

// checkEscapes holds Escape and Unescape to net/url's, byte for byte.
func checkEscapes(t *testing.T, s string) {
	t.Helper()
	require.Equal(t, url.QueryEscape(s), Escape(s, QueryKeeps), "QueryEscape(%q)", s)
	require.Equal(t, url.PathEscape(s), Escape(s, SegmentKeeps), "PathEscape(%q)", s)
	// (A path the widget escapes begins with "/": net/url keeps a bare "*".)
	require.Equal(t, (&url.URL{Path: "/" + s}).EscapedPath(), Escape("/"+s, PathKeeps), "EscapedPath of /%q", s)
	want, err := url.QueryUnescape(s)
	got, ok := Unescape(s, true)
	require.Equal(t, err == nil, ok, "QueryUnescape(%q)", s)
	require.Equal(t, want, got, "QueryUnescape(%q)", s)
	want, err = url.PathUnescape(s)
	got, ok = Unescape(s, false)
	require.Equal(t, err == nil, ok, "PathUnescape(%q)", s)
	require.Equal(t, want, got, "PathUnescape(%q)", s)
}

// BrowserURLs are URLs as a page sends them (a browser's serialisation),
// the references a relay writes and URLs providers cite. Each is read:
// the narrower language loses the widget none of them.
var BrowserURLs = []string{
	"http://127.0.0.1:8080/v1/chat/completions?drop_after=3",
	"https://site.test/ai/v1/chat/completions",
	"https://site.test/a/b/v1/chat/completions#x",
	"http://localhost:3000/api/chat",
	"http://[::1]:8080/v1/chat/completions",
	"https://[2001:db8::7]/v1/chat",
	"https://[2001:DB8:0:0:1:0:0:1]:8443/",
	"https://h/v1/chat/completions?dialect=anthropic&drop_after=3",
	"https://h/v1/chat?q=a%20b&x=%C3%A9|{}",
	"wss://other.example/ws",
	"https://en.wikipedia.org/wiki/Tea_(drink)",
	"https://en.wikipedia.org/wiki/Caf%C3%A9?utm_source=openai",
	"https://www.example.com/it's/a*b,c;d=e:f@g$h&i+j!~",
	"https://xn--caf-dma.example/",
	"https://h:443",
	"HTTPS://H.Example/X",
	"../streams/s1",
	"s1",
	"/ai/v1/streams/abc-DEF_123",
	"//h2/ws",
	"/custom/ws?x=1",
	"?x=1",
	"#top",
	"",
}

func TestParseReadsWhatBrowsersWriteAsNetURLDoes(t *testing.T) {
	for _, s := range BrowserURLs {
		_, ok := Parse(s)
		require.True(t, ok, "%q", s)
		for _, base := range BrowserURLs {
			check(t, base, s)
		}
		checkEscapes(t, s)
	}
}

func TestParseRefusesWhatItDoesNotRead(t *testing.T) {
	for _, s := range []string{
		"http://user:pw@h/", "mailto:a@b", "http:/x", "http:///x", "http://", "http://h:x/", "http://h:1:2/", "http://:80/",
		"http://[::1.2.3.4]/", "http://[fe80::1%25en0]/", "http://[1::2::3]/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[12345::]/",
		"http://a%41b/", "http://h/a b", "http://h/é", "http://h/a|b", "http://h/%zz", "http://h/#%", "http://h/?a b",
		"a:b/c", "http://h/\x00", "http://h\n/", "1http://h/",
	} {
		_, ok := Parse(s)
		require.False(t, ok, "%q", s)
		check(t, s, s)
	}
	// ParseHost reads any path, query and fragment net/url takes.
	u, ok := ParseHost("https://www.de.wikipedia.org/wiki/Café au lait?q=é ü#ß")
	require.True(t, ok)
	require.Equal(t, "www.de.wikipedia.org", u.Hostname())
	_, ok = ParseHost("https://h/%zz")
	require.False(t, ok, "net/url refuses it")
}

// Pieces of every part: schemes, hosts with ports and brackets, dot
// segments, escapes good and bad, queries, fragments and the bytes that
// break them.
var pieces = []string{"http:", "https:", "HTTP:", "ws:", "x-y.z:", "1a:", "//", "/", "/", "/", "h", "H.example", "[::1]", "[1:2:3:4:5:6:7:8]",
	"[1::2::3]", "[::ffff:1.2.3.4]", "[fe80::1%25en0]", "]", "[", ":", ":8080", ":x", "@", "u:p@", ".", "..", "./", "../", "a", "b:c",
	"%", "%2", "%2e", "%2F", "%20", "%zz", "%C3%A9", "é", " ", "+", "?", "?", "#", "&", "=", "x=1", ";", "'", "(", ")", "*", "!", "$", ",",
	"~", "_", "-", "|", "^", "`", "{", "\"", "<", "\\", "\x00", "\t", "\x7f", "streams", "v1", "s1", "*", "::", "1", "ab", "12345"}

// RandomURL is a URL of up to 12 pieces, after a URL a browser writes
// when from is true.
func randomURL(rng *rand.Rand, fromBrowser bool) string {
	var b strings.Builder
	if fromBrowser {
		b.WriteString(BrowserURLs[rng.IntN(len(BrowserURLs))])
	}
	for range rng.IntN(12) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// A bounded run of random URLs beside the tests; FuzzParse goes on from
// there (go test -fuzz FuzzParse ./internal/weburl).
func TestParseAgreesWithNetURLOnRandomURLs(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 32))
	n := 30000
	if testing.Short() {
		n = 3000
	}
	read := 0
	for i := range n {
		base, ref := randomURL(rng, i%2 == 0), randomURL(rng, false)
		if _, ok := Parse(base); ok {
			read++
		}
		check(t, base, ref)
		checkEscapes(t, ref)
	}
	require.Greater(t, read, n/10, "the random URLs reach past the refusals")
}

func FuzzParse(f *testing.F) {
	for _, s := range BrowserURLs {
		f.Add("https://site.test/ai/v1/chat/completions?x=1#f", s)
		f.Add(s, "../streams/s1")
	}
	f.Add("http://[::]/a/./b/../../c/.", "..//x/./..")
	f.Add("https://h/a/b", "?")
	f.Add("https://h", "//g")
	f.Fuzz(func(t *testing.T, base, ref string) {
		check(t, base, ref)
		checkEscapes(t, base)
		checkEscapes(t, ref)
	})
}
