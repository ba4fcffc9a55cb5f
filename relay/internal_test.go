package relay

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// A close reason is cut between characters, never inside one, and fits
// the close frame, for every length around the limit and characters of
// every UTF-8 width.
func TestCloseReasonsAreCutBetweenCharactersWithinTheFrame(t *testing.T) {
	for _, ch := range []string{"a", "é", "€", "😀"} {
		for n := 100; n <= 140; n++ {
			for pad := range 4 {
				s := strings.Repeat("x", pad) + strings.Repeat(ch, n)
				got := trim(s)
				require.LessOrEqual(t, len(got), maxCloseReason, "%q×%d", ch, n)
				require.True(t, utf8.ValidString(got), "%q×%d+%d: %q", ch, n, pad, got)
				if len(s) <= maxCloseReason {
					require.Equal(t, s, got)
					continue
				}
				body, ok := strings.CutSuffix(got, "...")
				require.True(t, ok)
				require.True(t, strings.HasPrefix(s, body))
				require.Greater(t, len(body), maxCloseReason-3-utf8.UTFMax, "cut no more than one character short")
			}
		}
	}
}

// The stream's reference, resolved by net/url as a browser resolves it
// (RFC 3986), against every request path under every mount prefix, is the
// stream's path under the same prefix.
func TestTheStreamReferenceResolvesUnderAnyPrefix(t *testing.T) {
	require.Equal(t, "../streams/abc", streamRef("/v1/chat/completions", "abc"))
	prefixes := []string{"", "/ai", "/a/b/c", "/v1", "/x:y", "/é%20"}
	paths := []string{"/v1/chat/completions", "/v1/streams/abc", "/v1/ws", "/", "/v1/", "/v1/streams/", "/deep/a/b/c/d", "/x:y"}
	for _, prefix := range prefixes {
		for _, p := range paths {
			for _, id := range []string{"abc", "a:b", "a b", "x"} {
				base := &url.URL{Scheme: "https", Host: "site.test", Path: prefix + p}
				ref, err := url.Parse(streamRef(p, id))
				require.NoError(t, err, "%s %s", p, id)
				require.False(t, ref.IsAbs(), "relative: %s", ref)
				got := base.ResolveReference(ref)
				require.Equal(t, prefix+"/v1/streams/"+id, got.Path, "from %s%s: %s", prefix, p, ref)
				require.Equal(t, "site.test", got.Host)
			}
		}
	}
}
