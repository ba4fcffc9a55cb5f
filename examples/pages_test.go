package examples_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/examples"
)

// Every page the index links to exists, and every local href/src of every
// page (relative or under /examples/) resolves inside Pages(); only the
// widget (/trickle/) and the relay's API (/v1/) live elsewhere.
func TestEveryLocalLinkOfEveryPageResolves(t *testing.T) {
	pages := examples.Pages()
	ref := regexp.MustCompile(`(?:href|src)="([^"#]+)"`)
	imp := regexp.MustCompile(`from "(\.[^"]+)"`)
	var checked int
	err := fs.WalkDir(pages, ".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() || !(strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".js")) {
			return nil
		}
		body, err := fs.ReadFile(pages, p)
		require.NoError(t, err)
		var targets []string
		for _, m := range ref.FindAllStringSubmatch(string(body), -1) {
			targets = append(targets, m[1])
		}
		for _, m := range imp.FindAllStringSubmatch(string(body), -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.HasPrefix(target, "/trickle/") || strings.HasPrefix(target, "/v1/") {
				continue
			}
			require.Falsef(t, strings.Contains(target, "://"), "%s links off-site to %s", p, target)
			resolved := path.Join(path.Dir(p), target)
			if strings.HasSuffix(target, "/") {
				resolved = path.Join(resolved, "index.html")
			}
			_, err := fs.Stat(pages, resolved)
			require.NoErrorf(t, err, "%s refers to %s, which is not in Pages()", p, target)
			checked++
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 10, "the pages should link to each other and to their scripts")
}

// Each example page loads the widget with the one script tag the README
// documents and contains at least one <trickle-answer>.
func TestEachExampleUsesTheWidgetTheDocumentedWay(t *testing.T) {
	for _, page := range []string{"answer/index.html", "transports/index.html", "a11y/index.html"} {
		body, err := fs.ReadFile(examples.Pages(), page)
		require.NoError(t, err)
		require.Contains(t, string(body), `<script type="module" src="/trickle/trickle.js"></script>`, page)
		require.Contains(t, string(body), `<trickle-answer`, page)
	}
}

// The example pages, as the relay serves them under /examples/.
func ExamplePages() {
	_ = fs.WalkDir(examples.Pages(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && path.Base(p) == "index.html" {
			fmt.Println("/examples/" + strings.TrimSuffix(p, "index.html"))
		}
		return err
	})
	// Output:
	// /examples/a11y/
	// /examples/answer/
	// /examples/chat/
	// /examples/
	// /examples/transports/
}

// Every measured figure the transports page quotes (marked class="fig")
// is one docs/PERFORMANCE.md records, so the page cannot drift from the
// measurements: when a figure there is replaced, this test names the page's
// stale copy. A range "a–b" needs both ends; thousands separators are
// ignored on both sides.
func TestTheTransportsPageQuotesOnlyFiguresRecordedInPerformanceMD(t *testing.T) {
	page, err := fs.ReadFile(examples.Pages(), "transports/index.html")
	require.NoError(t, err)
	perf, err := os.ReadFile(filepath.Join("..", "docs", "PERFORMANCE.md"))
	require.NoError(t, err)
	number := regexp.MustCompile(`\d+(?:\.\d+)?%?`)
	recorded := map[string]bool{}
	for _, n := range number.FindAllString(strings.ReplaceAll(string(perf), ",", ""), -1) {
		recorded[n] = true
		recorded[strings.TrimSuffix(n, "%")] = true
	}
	figs := regexp.MustCompile(`<span class="fig">([^<]+)</span>`).FindAllStringSubmatch(string(page), -1)
	require.Greater(t, len(figs), 10, "the page's figures should be marked")
	for _, f := range figs {
		for _, end := range strings.Split(strings.ReplaceAll(f[1], ",", ""), "–") {
			require.Truef(t, recorded[end], "the transports page quotes %s (in %q), which docs/PERFORMANCE.md does not record", end, f[1])
		}
	}
}

// Every --trickle-* custom property the example pages set is one the
// widget's stylesheet reads: a page themes the widget only through
// properties it reads, and a misspelt one (the pages once set --trickle-bg
// and --trickle-fg) silently does nothing.
func TestTheExamplesThemeTheWidgetOnlyWithPropertiesItReads(t *testing.T) {
	css, err := os.ReadFile("../wasm/web/trickle.css")
	require.NoError(t, err)
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`var\((--trickle-[a-z0-9-]+)`).FindAllStringSubmatch(string(css), -1) {
		read[m[1]] = true
	}
	require.NotEmpty(t, read)
	set := regexp.MustCompile(`(--trickle-[a-z0-9-]+)\s*:`)
	checked := 0
	require.NoError(t, fs.WalkDir(examples.Pages(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".css") || strings.HasSuffix(p, ".html")) {
			return err
		}
		b, err := fs.ReadFile(examples.Pages(), p)
		require.NoError(t, err)
		for _, m := range set.FindAllStringSubmatch(string(b), -1) {
			checked++
			require.True(t, read[m[1]], "%s sets %s, which trickle.css never reads", p, m[1])
		}
		return nil
	}))
	require.NotZero(t, checked, "the pages theme the widget somewhere")
}
