package element

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// withQueryValue writes what url.Values writes after Query and Set (the
// oracle it replaces): random queries of pairs, empty pairs, semicolons,
// bad and good escapes, repeated keys and the key itself already there.
func TestWithQueryValueIsURLValuesSetAndEncode(t *testing.T) {
	pieces := []string{"a", "b", "=", "&", "&", ";", "%", "%2", "%20", "%zz", "%C3%A9", "+", " ", "é", "access_token",
		"access_token=", "dialect=openai", "x=1", "x=2", "=v", "k=", "\xff", "#", "?", "A"}
	rng := rand.New(rand.NewPCG(34, 3))
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for range n {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		q := b.String()
		token := pieces[rng.IntN(len(pieces))] + pieces[rng.IntN(len(pieces))]
		v, _ := url.ParseQuery(q)
		if v == nil {
			v = url.Values{}
		}
		v.Set("access_token", token)
		if got, want := withQueryValue(q, "access_token", token), v.Encode(); got != want {
			t.Fatalf("withQueryValue(%q, access_token, %q) = %q, url.Values: %q", q, token, got, want)
		}
	}
}

// Past net/url's limit on parameters the query is read as empty.
func TestWithQueryValueReadsAnOverlongQueryAsNetURLDoes(t *testing.T) {
	for _, n := range []int{maxQueryParams - 1, maxQueryParams, maxQueryParams + 1} {
		q := strings.Repeat("a=1&", n-1) + "b=2"
		v, _ := url.ParseQuery(q)
		if v == nil {
			v = url.Values{}
		}
		v.Set("access_token", "t")
		if got, want := withQueryValue(q, "access_token", "t"), v.Encode(); got != want {
			t.Fatalf("%d parameters: got %d bytes, url.Values %d", n, len(got), len(want))
		}
	}
}
