package examples_test

import (
	"fmt"
	"io/fs"
	"path"
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
	// /examples/
	// /examples/transports/
}
