package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/examples"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/wasm/element"
)

// The README's reference and docs/relay.md's flag table are checked against
// the code itself, so that neither can drift: each block marked
// <!-- reference: KIND --> must name exactly what the code has. The code's
// side is read from the code: trickle serve's flag set (its --help), the
// widget's sources (the parts it writes, the attributes it reads, the
// events it dispatches), the json tags of element.Metrics and relay.Info,
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
// package wasm and wasm/element, and the JavaScript under wasm/web (and
// its early view, wasm/web/early).
func widgetSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, pattern := range []string{"wasm/*.go", "wasm/*/*.go", "wasm/element/*.go", "wasm/web/*.js", "wasm/web/early/*.js"} {
		files, err := filepath.Glob(filepath.Join("..", "..", pattern))
		require.NoError(t, err)
		for _, f := range files {
			// contract.js is generated: its names are what the sources use.
			if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, ".test.js") || strings.Contains(f, filepath.Join("wasm", "internal")) || chatSource(f) || filepath.Base(f) == "contract.js" {
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

// chatModules are <trickle-chat>'s modules, whose attributes, events and
// parts are the chat's (chat_types_test.go holds them to its own types).
var chatModules = []string{"chat.js", "composer.js", "request.js", "restore.js", "history.js", "thread.js", "actions.js", "approval.js"}

// chatSource says whether f is one of chatModules (in wasm/web itself:
// early/request.js is the answer's).
func chatSource(f string) bool {
	return filepath.Base(filepath.Dir(f)) == "web" && slices.Contains(chatModules, filepath.Base(f))
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

// The reference pages of docs/reference: each element's, and the relay's
// endpoints. Their blocks are checked like the README's.
const (
	answerPage = "docs/reference/trickle-answer.md"
	chatPage   = "docs/reference/trickle-chat.md"
	relayPage  = "docs/reference/relay-api.md"
)

// references returns the block of kind in each of docs that has one, by
// file (the README keeps its blocks until its reference moves to the
// pages; a page's blocks are required by TestTheReferencePagesHaveEveryTable).
func references(t *testing.T, kind string, docs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		require.NoError(t, err)
		if regexp.MustCompile(`<!-- reference: ` + regexp.QuoteMeta(kind) + `[ (]`).Match(b) {
			out[doc] = reference(t, doc, kind)
		}
	}
	require.NotEmpty(t, out, "no doc of %v has a <!-- reference: %s --> block", docs, kind)
	return out
}

func TestTheReferencePagesHaveEveryTable(t *testing.T) {
	for page, kinds := range map[string][]string{
		answerPage: {"attributes", "methods", "properties", "events", "metrics", "parts", "strings"},
		chatPage:   {"attributes", "methods", "properties", "events", "parts", "strings"},
		relayPage:  {"endpoints"},
	} {
		for _, kind := range kinds {
			require.Contains(t, references(t, kind, page), page, "%s lost its %s table", page, kind)
			require.Contains(t, reference(t, page, kind), "| --- |", "%s's %s block is no table", page, kind)
		}
	}
}

func TestTheReadmeNamesEveryAttributeTheElementReads(t *testing.T) {
	code := codeAttributes(t)
	require.NotEmpty(t, code, "no attribute reads found: if the widget reads its attributes another way, teach codeAttributes that way")
	for doc, block := range references(t, "attributes", "README.md", answerPage) {
		require.Equal(t, code, firstColumn(block), "%s's attribute table and the attributes the widget reads", doc)
	}
}

// chatAttributes are the attributes <trickle-chat> takes, as chat.js reads
// them: contract.js's CHAT_ATTRIBUTES and CHAT_FORWARDS.
func chatAttributes(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "contract.js"))
	require.NoError(t, err)
	var out []string
	for _, list := range []string{"CHAT_ATTRIBUTES", "CHAT_FORWARDS"} {
		m := regexp.MustCompile(`export const ` + list + ` = [^\[]*\[([^\]]*)\]`).FindSubmatch(b)
		require.NotNil(t, m, "contract.js lost %s", list)
		for _, q := range regexp.MustCompile(`"([a-z-]+)"`).FindAllSubmatch(m[1], -1) {
			if !slices.Contains(out, string(q[1])) {
				out = append(out, string(q[1]))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestTheChatReferenceNamesEveryAttributeTheChatTakes(t *testing.T) {
	src := chatSources(t)
	require.Contains(t, src, "CHAT_FORWARDS", "chat.js no longer hands the contract's list to its answers: teach chatAttributes how it does")
	require.Equal(t, chatAttributes(t), firstColumn(reference(t, chatPage, "attributes")), "trickle-chat.md's attribute table and the chat's attributes")
}

// chatSources is the text of chatModules.
func chatSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, f := range chatModules {
		data, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", f))
		require.NoError(t, err)
		b.Write(data)
	}
	return b.String()
}

func TestTheReadmeNamesEveryEventTheElementDispatches(t *testing.T) {
	code := codeEvents(t)
	require.NotEmpty(t, code, "no dispatched events found: if the widget dispatches them another way, teach codeEvents that way")
	for doc, block := range references(t, "events", "README.md", answerPage) {
		require.Equal(t, code, names(block, regexp.MustCompile(`^trickle-[a-z-]+$`)),
			"%s's events and the event names in the widget's sources", doc)
	}
	chat := found(chatSources(t), `CustomEvent\(\s*"(trickle-[a-z]+(?:-[a-z]+)*)"`)
	require.Contains(t, chat, "trickle-chat-change")
	require.Equal(t, chat, names(reference(t, chatPage, "events"), regexp.MustCompile(`^trickle-[a-z-]+$`)),
		"trickle-chat.md's events and the events chat.js dispatches")
}

// metricsFields are the element's metrics: element.Metrics' json tags and
// what element.js adds to them on the page (speech: reading aloud is the
// page's).
func metricsFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "element.js"))
	require.NoError(t, err)
	m := regexp.MustCompile(`\{ \.\.\.m, ([^}]*)\}`).FindSubmatch(b)
	require.NotNil(t, m, "element.js's metrics getter adds no field")
	out := jsonTags(element.Metrics{})
	for _, f := range strings.Split(string(m[1]), ",") {
		if name, _, ok := strings.Cut(strings.TrimSpace(f), ":"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestTheReadmeNamesEveryMetricsField(t *testing.T) {
	for doc, block := range references(t, "metrics", "README.md", answerPage) {
		if doc == answerPage {
			block = strings.Join(firstColumn(block), " ") // the table's first column: its descriptions quote values
			block = "`" + strings.ReplaceAll(block, " ", "` `") + "`"
		}
		require.Equal(t, metricsFields(t),
			names(block, regexp.MustCompile(`^[a-z][a-z0-9_]*$`)),
			"%s's metrics fields and the element's (element.Metrics' json tags and element.js's)", doc)
	}
}

func TestTheReadmeNamesEveryLightDOMPart(t *testing.T) {
	src := widgetSources(t)
	code := found(src, `data-trickle="([a-z][a-z-]*)"`)
	require.Contains(t, code, "announcer")
	// The reference page also names the parts the page's script adds
	// (dataset.trickle = "copy", …).
	all := found(src, `data-trickle="([a-z][a-z-]*)"`, `\bdataset\.trickle = "([a-z][a-z-]*)"`)
	require.Contains(t, all, "copy")
	require.Equal(t, all, firstColumn(reference(t, answerPage, "parts")),
		"trickle-answer.md's parts and the data-trickle parts in the widget's sources")

	chat := found(chatSources(t), `\bq\("[a-z]+", "([a-z][a-z-]*)"`, `\bdataset\.trickleChat = "([a-z][a-z-]*)"`, `\bactionButton\("([a-z][a-z-]*)", `)
	require.Contains(t, chat, "composer")
	require.Equal(t, chat, firstColumn(reference(t, chatPage, "parts")),
		"trickle-chat.md's parts and the data-trickle-chat parts the chat's modules make")
}

// classMembers returns the methods and the properties of a class of the
// .d.ts (which types_test.go holds to element.js), without the event
// listener methods every element has.
func classMembers(t *testing.T, class string) (methods, props []string) {
	t.Helper()
	body := dts(t, "class", class)
	for _, m := range regexp.MustCompile(`(?m)^  (readonly |get |set )?([a-z]\w*)([(:<])`).FindAllStringSubmatch(body, -1) {
		name := m[2]
		if name == "addEventListener" || name == "removeEventListener" {
			continue
		}
		if m[3] == "(" && m[1] == "" {
			if !slices.Contains(methods, name+"()") {
				methods = append(methods, name+"()")
			}
		} else if !slices.Contains(props, name) {
			props = append(props, name)
		}
	}
	sort.Strings(methods)
	sort.Strings(props)
	return methods, props
}

// calls returns the first column of a table of methods as name() (the
// table writes each with its arguments).
func calls(table string) []string {
	var out []string
	for _, c := range firstColumn(table) {
		name, _, _ := strings.Cut(c, "(")
		out = append(out, name+"()")
	}
	sort.Strings(out)
	return out
}

func TestTheReferenceNamesEveryMethodAndProperty(t *testing.T) {
	for class, page := range map[string]string{"TrickleAnswer": answerPage, "TrickleChat": chatPage} {
		methods, props := classMembers(t, class)
		require.NotEmpty(t, methods, class)
		require.Equal(t, methods, calls(reference(t, page, "methods")), "%s's methods and the %s class's", page, class)
		require.Equal(t, props, firstColumn(reference(t, page, "properties")), "%s's properties and the %s class's", page, class)
	}
	// The chat's .d.ts class is chat.js's.
	src := chatSources(t)
	methods, props := classMembers(t, "TrickleChat")
	for _, m := range methods {
		require.Regexp(t, `(?m)^  (async )?`+strings.TrimSuffix(m, "()")+`\(`, src, "chat.js has no method %s", m)
	}
	for _, p := range props {
		require.Regexp(t, `(?m)^  (get `+p+`\(|`+p+` = )`, src, "chat.js has no property %s", p)
	}
}

func TestTheReadmeNamesEveryEndpointAndInfoField(t *testing.T) {
	for doc, table := range references(t, "endpoints", "README.md", relayPage) {
		checkEndpoints(t, doc, table)
	}
}

func checkEndpoints(t *testing.T, doc, table string) {
	// trickle serve's relay: the widget and the pages enabled.
	srv, err := relay.New(relay.WithMissingWidget(noWidget), relay.WithPages(examples.Pages()))
	require.NoError(t, err)
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
			require.Contains(t, mentioned, r.Path, "%s's endpoint table says nothing of %s %s", doc, r.Method, r.Path)
		}
	}
	sort.Strings(code)
	require.Equal(t, documented, code, "every endpoint in %s is a route of the relay", doc)

	var row string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| `GET /v1/streams/{id}/info` |") {
			row = strings.SplitN(line, "|", 3)[2]
		}
	}
	require.NotEmpty(t, row, "%s's endpoint table has the info row", doc)
	require.Equal(t, jsonTags(relay.Info{}), names(row, regexp.MustCompile(`^[a-z][a-z_]*$`)),
		"%s's info fields and relay.Info's json tags", doc)
}

// docs/security.md's table of bounds names every flag that bounds memory,
// time, connections or spending, and no other, each with the default
// trickle serve has.
func TestTheSecurityPageListsEveryBoundWithItsFlagsDefault(t *testing.T) {
	fs := serveFlags(t)
	isBound := regexp.MustCompile(`^max-|-timeout$|^(rate-limit|tokens-per-day|retention|grace|cut-wait|lease|upstream-retries)$`)
	var want []string
	fs.VisitAll(func(f *flag.Flag) {
		if isBound.MatchString(f.Name) {
			want = append(want, f.Name)
		}
	})
	sort.Strings(want)
	var listed []string
	for _, line := range strings.Split(reference(t, "docs/security.md", "bounds"), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`--") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`-")
		listed = append(listed, name)
		f := fs.Lookup(name)
		require.NotNil(t, f, "docs/security.md lists --%s, which trickle serve does not have", name)
		require.Equal(t, humanDefault(t, f), strings.TrimSpace(cells[2]), "the default of --%s", name)
	}
	sort.Strings(listed)
	require.Equal(t, want, listed, "docs/security.md's bounds and trickle serve's flags that bound")
}

// serveFlags is trickle serve's flag set, each flag with its default.
func serveFlags(t *testing.T) *flag.FlagSet {
	t.Helper()
	var got *flag.FlagSet
	defer func(old func(*flag.FlagSet)) { inspectServeFlags = old }(inspectServeFlags)
	inspectServeFlags = func(fs *flag.FlagSet) { got = fs }
	var out, help bytes.Buffer
	require.Equal(t, 0, serveContext(context.Background(), []string{"--help"}, &out, &help, nil))
	require.NotNil(t, got)
	return got
}

// humanDefault writes a flag's default as the docs do: "10 s", "5 min",
// "64 MiB", "20000", and for a flag that is off by default the words its
// help gives ("no cap", "no limit", "no bound").
func humanDefault(t *testing.T, f *flag.Flag) string {
	t.Helper()
	def := f.DefValue
	if def == "" || def == "0" {
		for _, words := range []string{"no cap", "no limit", "no bound"} {
			if strings.Contains(f.Usage, words) {
				return words
			}
		}
		return "none"
	}
	if d, err := time.ParseDuration(def); err == nil {
		if d%time.Minute == 0 {
			return fmt.Sprintf("%d min", d/time.Minute)
		}
		return fmt.Sprintf("%d s", d/time.Second)
	}
	n, err := strconv.ParseInt(def, 10, 64)
	require.NoError(t, err, "the default of --%s", f.Name)
	if strings.Contains(f.Name, "bytes") || f.Name == "max-body" || f.Name == "max-event" {
		for _, u := range []struct {
			name string
			size int64
		}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
			if n%u.size == 0 {
				return fmt.Sprintf("%d %s", n/u.size, u.name)
			}
		}
	}
	return def
}
