package chat

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// The stream's reference, resolved by net/url as a browser resolves it
// (RFC 3986), against every request path under every mount prefix, is the
// stream's path under the same prefix.
func TestTheStreamReferenceResolvesUnderAnyPrefix(t *testing.T) {
	require.Equal(t, "../streams/abc", StreamRef("/v1/chat/completions", "abc"))
	prefixes := []string{"", "/ai", "/a/b/c", "/v1", "/x:y", "/é%20"}
	paths := []string{"/v1/chat/completions", "/v1/streams/abc", "/v1/ws", "/", "/v1/", "/v1/streams/", "/deep/a/b/c/d", "/x:y"}
	for _, prefix := range prefixes {
		for _, p := range paths {
			for _, id := range []string{"abc", "a:b", "a b", "x"} {
				base := &url.URL{Scheme: "https", Host: "site.test", Path: prefix + p}
				ref, err := url.Parse(StreamRef(p, id))
				require.NoError(t, err, "%s %s", p, id)
				require.False(t, ref.IsAbs(), "relative: %s", ref)
				got := base.ResolveReference(ref)
				require.Equal(t, prefix+"/v1/streams/"+id, got.Path, "from %s%s: %s", prefix, p, ref)
				require.Equal(t, "site.test", got.Host)
			}
		}
	}
}
