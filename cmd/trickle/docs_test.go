package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/examples"
	"github.com/trickle-dev/trickle/internal/widget"
	"github.com/trickle-dev/trickle/relay"
)

// The README's reference and docs/relay.md's flag table are checked against
// the code itself, so that neither can drift: each block marked
// <!-- reference: KIND --> must name exactly what the code has. The code's
// side is read from the code: trickle serve's flag set (its --help), the
// widget's sources (the parts it writes, the attributes it reads, the
// events it dispatches), the json tags of widget.Metrics and relay.Info,
// and the relay's router.

// reference returns the block that follows <!-- reference: kind ... -->:
// the lines up to the next blank line (a table or a paragraph).
func reference(t *testing.T, doc, kind string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", doc))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- reference: "+kind)
	require.True(t, ok, "%s lost its <!-- reference: %s --> marker", doc, kind)
	_, after, _ = strings.Cut(after, "-->\n")
	block, _, _ := strings.Cut(after, "\n\n")
	return block
}

var backticked = regexp.MustCompile("`([^`]+)`")

// names returns the backticked tokens of text that match pattern, sorted
// and without repeats.
func names(text string, pattern *regexp.Regexp) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if pattern.MatchString(m[1]) && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// firstColumn returns the backticked tokens of the first cell of each row
// of a markdown table.
func firstColumn(table string) []string {
	var out []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// widgetSources is the text of the widget's non-test sources: the Go of
// package wasm and internal/widget, and the JavaScript under wasm/web.
func widgetSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, pattern := range []string{"wasm/*.go", "wasm/*/*.go", "internal/widget/*.go", "wasm/web/*.js"} {
		files, err := filepath.Glob(filepath.Join("..", "..", pattern))
		require.NoError(t, err)
		for _, f := range files {
			// contract.js is generated: its names are what the sources use.
			if strings.HasSuffix(f, "_test.go") || strings.Contains(f, filepath.Join("wasm", "internal")) || chatSource(f) || filepath.Base(f) == "contract.js" {
				continue
			}
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			b.Write(data)
			b.WriteByte('\n')
		}
	}
	require.NotZero(t, b.Len())
	return b.String()
}

// chatSource says whether f is <trickle-chat>'s (chat.js, history.js),
// whose attributes and events chat_types_test.go holds to its own types.
func chatSource(f string) bool {
	base := filepath.Base(f)
	return base == "chat.js" || base == "history.js"
}

// found returns the first submatches of the patterns in src, sorted and
// without repeats.
func found(src string, patterns ...string) []string {
	var out []string
	for _, p := range patterns {
		for _, m := range regexp.MustCompile(p).FindAllStringSubmatch(src, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	sort.Strings(out)
	return out
}

// jsonTags returns the json names of a struct's fields.
func jsonTags(v any) []string {
	var out []string
	typ := reflect.TypeOf(v)
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestTheDocsNameEveryServeFlagAndNoOther(t *testing.T) {
	var out, help bytes.Buffer
	require.Equal(t, 0, serveContext(context.Background(), []string{"--help"}, &out, &help, nil))
	code := found(help.String(), `(?m)^  -([a-z][a-z0-9-]*)[ \n]`)
	require.NotEmpty(t, code)
	var table []string
	for _, f := range firstColumn(reference(t, "docs/relay.md", "flags")) {
		table = append(table, strings.TrimPrefix(f, "--"))
	}
	require.Equal(t, code, table, "docs/relay.md's flag table and trickle serve's flags")

	// The README names the main flags only, and only real ones.
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, f := range found(string(readme), "`--([a-z][a-z0-9-]*)") {
		if strings.HasPrefix(f, "trickle-") {
			continue // a --trickle-… CSS custom property of the widget's theme, not a flag
		}
		require.Contains(t, code, f, "the README names --%s, which trickle serve does not have", f)
	}
}

func TestTheReadmeNamesEveryAttributeTheElementReads(t *testing.T) {
	code := codeAttributes(t)
	require.NotEmpty(t, code, "no attribute reads found: if the widget reads its attributes another way, teach codeAttributes that way")
	require.Equal(t, code, firstColumn(reference(t, "README.md", "attributes")), "the README's attribute table and the attributes the widget reads")
}

func TestTheReadmeNamesEveryEventTheElementDispatches(t *testing.T) {
	code := codeEvents(t)
	require.NotEmpty(t, code, "no dispatched events found: if the widget dispatches them another way, teach codeEvents that way")
	require.Equal(t, code, names(reference(t, "README.md", "events"), regexp.MustCompile(`^trickle-[a-z-]+$`)),
		"the README's events and the event names in the widget's sources")
}

// metricsFields are the element's metrics: widget.Metrics' json tags and
// what element.js adds to them on the page (speech: reading aloud is the
// page's).
func metricsFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "element.js"))
	require.NoError(t, err)
	m := regexp.MustCompile(`\{ \.\.\.m, ([^}]*)\}`).FindSubmatch(b)
	require.NotNil(t, m, "element.js's metrics getter adds no field")
	out := jsonTags(widget.Metrics{})
	for _, f := range strings.Split(string(m[1]), ",") {
		if name, _, ok := strings.Cut(strings.TrimSpace(f), ":"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestTheReadmeNamesEveryMetricsField(t *testing.T) {
	require.Equal(t, metricsFields(t),
		names(reference(t, "README.md", "metrics"), regexp.MustCompile(`^[a-z][a-z0-9_]*$`)),
		"the README's metrics fields and the element's (widget.Metrics' json tags and element.js's)")
}

func TestTheReadmeNamesEveryLightDOMPart(t *testing.T) {
	code := found(widgetSources(t), `data-trickle="([a-z][a-z-]*)"`)
	require.Contains(t, code, "announcer")
	require.Equal(t, code, names(reference(t, "README.md", "parts"), regexp.MustCompile(`^[a-z][a-z-]*$`)),
		"the README's parts and the data-trickle parts in the widget's sources")
}

func TestTheReadmeNamesEveryEndpointAndInfoField(t *testing.T) {
	// trickle serve's relay: the widget and the pages enabled.
	srv, err := relay.New(relay.WithMissingWidget(noWidget), relay.WithPages(examples.Pages()))
	require.NoError(t, err)
	table := reference(t, "README.md", "endpoints")
	documented := firstColumn(table)
	// Paths the table mentions in its descriptions (redirects).
	mentioned := names(table, regexp.MustCompile(`^/`))

	var code []string
	for _, r := range srv.Routes() {
		switch {
		case r.Method == "HEAD" && slices.Contains(documented, "GET "+r.Path):
			// HEAD comes with GET.
		case slices.Contains(documented, r.Method+" "+r.Path):
			code = append(code, r.Method+" "+r.Path)
		default:
			require.Contains(t, mentioned, r.Path, "the README's endpoint table says nothing of %s %s", r.Method, r.Path)
		}
	}
	sort.Strings(code)
	require.Equal(t, documented, code, "every endpoint in the README is a route of the relay")

	var row string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| `GET /v1/streams/{id}/info` |") {
			row = strings.SplitN(line, "|", 3)[2]
		}
	}
	require.NotEmpty(t, row, "the README's endpoint table has the info row")
	require.Equal(t, jsonTags(relay.Info{}), names(row, regexp.MustCompile(`^[a-z][a-z_]*$`)),
		"the README's info fields and relay.Info's json tags")
}
