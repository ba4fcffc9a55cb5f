package render

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestMarkersBecomeLinksWhereTheyCanBe(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		markers   []Marker
		want      string
	}{
		{"at a sentence end", "Tea. Milk.", []Marker{{At: 4, Label: "1", URL: "https://a.example/t"}, {At: 10, Label: "2", URL: "https://b.example"}},
			`<p>Tea.<a href="https://a.example/t" rel="` + Rel + `">[1]</a> Milk.<a href="https://b.example" rel="` + Rel + `">[2]</a></p>` + "\n"},
		{"without a URL", "Tea.", []Marker{{At: 4, Label: "1"}}, "<p>Tea.[1]</p>\n"},
		{"a javascript: URL is text", "Tea.", []Marker{{At: 4, Label: "1", URL: "javascript:alert(1)"}}, "<p>Tea.[1]</p>\n"},
		{"a URL that cannot be a destination", "Tea.", []Marker{{At: 4, Label: "1", URL: "https://a.example/<x>"}}, "<p>Tea.[1]</p>\n"},
		{"after a bang, no image", "Wow!", []Marker{{At: 4, Label: "1", URL: "https://a.example/i.png"}},
			`<p>Wow! <a href="https://a.example/i.png" rel="` + Rel + `">[1]</a></p>` + "\n"},
		{"inside a code span it moves past it", "Use `a b` here", []Marker{{At: 6, Label: "1"}}, "<p>Use <code>a b</code>[1] here</p>\n"},
		{"inside a double-backtick span", "Use ``a`b`` here", []Marker{{At: 7, Label: "1"}}, "<p>Use <code>a`b</code>[1] here</p>\n"},
		{"inside a fenced block it is left out", "```\ncode\n```\n", []Marker{{At: 8, Label: "1"}, {At: 12, Label: "2"}}, "<pre><code>code\n</code></pre>\n"},
		{"past the end goes at the end", "Tea", []Marker{{At: 99, Label: "1"}}, "<p>Tea[1]</p>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Convert(Mark(tc.src, tc.markers))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestMarkingKeepsTheTextsOtherHTML(t *testing.T) {
	// Over a varied answer, a marker at every offset leaves the answer's
	// own text, as rendered, unchanged apart from the marker.
	src := "## Tea\n\nBrew at **80 °C** — `hot` [docs](https://x.example).\n\n- one\n- two\n\n```go\nx := 1\n```\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"
	plain, err := Convert(src)
	require.NoError(t, err)
	for at := 0; at <= len(src); at++ {
		got, err := Convert(Mark(src, []Marker{{At: at, Label: "9"}}))
		require.NoError(t, err)
		require.True(t, utf8.ValidString(got), "at %d", at)
		n := strings.Count(got, "[9]")
		require.LessOrEqual(t, n, 1, "at %d: %s", at, got)
		if n == 1 {
			got = strings.Replace(got, "[9]", "", 1)
		}
		// Removing the marker gives the answer back, or the marker sat
		// where it split a construct (a heading's #s, a list's bullet):
		// then it is at least still visible once.
		if got != plain {
			require.Equal(t, 1, n, "at %d the marker vanished and changed the answer:\n%s", at, got)
		}
	}
}

// sortMarkers orders as sort.SliceStable by At does, the original as the
// oracle: over every list of up to 7 markers at 3 places, each labelled
// with its index so that an unstable order shows.
func TestSortMarkersIsSliceStable(t *testing.T) {
	for n := 0; n <= 7; n++ {
		total := 1
		for range n {
			total *= 3
		}
		for code := range total {
			ms := make([]Marker, n)
			for i, c := 0, code; i < n; i, c = i+1, c/3 {
				ms[i] = Marker{At: c % 3 * 10, Label: strconv.Itoa(i)}
			}
			want := slices.Clone(ms)
			sort.SliceStable(want, func(i, j int) bool { return want[i].At < want[j].At })
			sortMarkers(ms)
			require.Equal(t, want, ms)
		}
	}
}
