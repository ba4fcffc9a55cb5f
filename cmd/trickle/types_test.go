package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/element"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// The package's types (wasm/web/types/trickle-answer.d.ts) and its
// custom-elements manifest are checked against the code the same way the
// README is: each must name exactly what the widget has.

// dts returns the body of the declaration `kind name` (an interface or a
// class) in the package's .d.ts: the lines between its braces.
func dts(t *testing.T, kind, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "types", "trickle-answer.d.ts"))
	require.NoError(t, err)
	src := string(b)
	i := regexp.MustCompile(`(?m)^export (?:declare )?` + kind + ` ` + name + `\b[^{]*\{`).FindStringIndex(src)
	require.NotNil(t, i, "the .d.ts lost its %s %s", kind, name)
	body := src[i[1]:]
	end := strings.Index(body, "\n}")
	require.GreaterOrEqual(t, end, 0)
	return body[:end]
}

func members(body string, pattern string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)`+pattern).FindAllStringSubmatch(body, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// codeAttributes are the attributes the widget's sources read: by name,
// or (the page's modules) through the contract (wasm/web/contract.js): an
// ATTR_ constant, or every attribute of COMMAND_ATTRIBUTES, which the
// answer's request() sends Go.
func codeAttributes(t *testing.T) []string {
	src := widgetSources(t)
	names := found(src,
		`\battr\("([a-z][a-z-]*)"`,                                         // Go: e.attr("endpoint", …)
		`"(?:get|has)Attribute", "([a-z][a-z-]*)"`,                         // Go: el.Call("hasAttribute", "show-metrics")
		`\b(?:this|this\.el|el)\.(?:get|has)Attribute\("([a-z][a-z-]*)"\)`, // JS: this.getAttribute("endpoint") on the element (not a sanitized node's "class")
		`\ba\("([a-z][a-z-]*)"\)`,                                          // JS: a("endpoint"), a one-letter getAttribute helper
	)
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "contract.js"))
	require.NoError(t, err)
	contract := string(b)
	byConst := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^export const (ATTR_\w+) = "([a-z-]+)";$`).FindAllStringSubmatch(contract, -1) {
		byConst[m[1]] = m[2]
	}
	require.NotEmpty(t, byConst, "contract.js lost its ATTR_ constants")
	read := regexp.MustCompile(`\b(?:get|has)Attribute\((ATTR_\w+)\)`).FindAllStringSubmatch(src, -1)
	if regexp.MustCompile(`\bof COMMAND_ATTRIBUTES\b`).MatchString(src) {
		_, rows, ok := strings.Cut(contract, "export const COMMAND_ATTRIBUTES = /* @__PURE__ */ Object.freeze([")
		require.True(t, ok)
		rows, _, _ = strings.Cut(rows, "]);")
		for _, m := range regexp.MustCompile(`\["([a-z-]+)",`).FindAllStringSubmatch(rows, -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	for _, m := range read {
		name, ok := byConst[m[1]]
		require.True(t, ok, "%s is no constant of contract.js", m[1])
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// codeEvents are the events the widget's sources dispatch.
func codeEvents(t *testing.T) []string {
	return found(widgetSources(t),
		`(?:dispatch\w*|CustomEvent|emit\w*)\(\s*"(trickle-[a-z]+(?:-[a-z]+)*)"`, // Go: e.dispatch("trickle-end", …); JS: new CustomEvent("trickle-error", …)
		`DOMEvent\{Name: "(trickle-[a-z]+(?:-[a-z]+)*)"`,                         // Go: protocol.DOMEvent{Name: "trickle-start", …}, an event the page's script dispatches
	)
}

func TestTheTypesNameEveryAttributeTheElementReads(t *testing.T) {
	code := codeAttributes(t)
	require.NotEmpty(t, code)
	require.Equal(t, code, members(dts(t, "interface", "TrickleAnswerAttributes"), `^  "?([a-z][a-z-]*)"?\?:`))
}

func TestTheTypesNameEveryEventWithItsDetail(t *testing.T) {
	code := codeEvents(t)
	require.NotEmpty(t, code)
	events := dts(t, "interface", "TrickleAnswerEventMap")
	require.Equal(t, code, members(events, `^  "(trickle-[a-z-]+)":`))
	for _, name := range code {
		require.Regexp(t, `"`+name+`": CustomEvent<Trickle\w+Detail>;`, events, "%s has a typed detail", name)
	}
}

func TestTheTypesNameEveryMetricsField(t *testing.T) {
	require.Equal(t, metricsFields(t), members(dts(t, "interface", "TrickleAnswerMetrics"), `^  ([a-z][a-z0-9_]*):`))
}

func TestTheTypesNameEveryMethodAndPropertyOfTheElement(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "element.js"))
	require.NoError(t, err)
	class := string(b)
	var code []string
	for _, m := range members(class, `^  (?:get |set |async )?([a-z]\w*)\(`) {
		if m != "connectedCallback" && m != "disconnectedCallback" {
			code = append(code, m)
		}
	}
	require.Contains(t, code, "ask")
	var typed []string
	for _, m := range members(dts(t, "class", "TrickleAnswer"), `^  (?:readonly |get |set )?([a-z]\w*)[(:<]`) {
		if m != "addEventListener" && m != "removeEventListener" {
			typed = append(typed, m)
		}
	}
	require.Equal(t, code, typed, "element.js's public methods and properties, and the .d.ts class's")
}

func TestTheTypesNameEveryStatus(t *testing.T) {
	want := []string{"idle"}
	for s := stream.Streaming; s <= stream.Failed; s++ {
		want = append(want, s.String())
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "types", "trickle-answer.d.ts"))
	require.NoError(t, err)
	m := regexp.MustCompile(`export type TrickleStatus = ([^;]+);`).FindStringSubmatch(string(b))
	require.NotNil(t, m)
	got := members(m[1], `"([a-z]+)"`)
	sort.Strings(want)
	require.Equal(t, want, got)
}

func TestTheCustomElementsManifestNamesEveryAttributeAndEvent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "types", "custom-elements.json"))
	require.NoError(t, err)
	var m struct {
		Modules []struct {
			Declarations []struct {
				TagName    string `json:"tagName"`
				Attributes []struct{ Name string }
				Events     []struct{ Name string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(b, &m))
	var attrs, events []string
	tags := 0
	for _, mod := range m.Modules {
		for _, d := range mod.Declarations {
			if d.TagName != "trickle-answer" {
				continue
			}
			tags++
			for _, a := range d.Attributes {
				attrs = append(attrs, a.Name)
			}
			for _, e := range d.Events {
				events = append(events, e.Name)
			}
		}
	}
	require.Equal(t, 1, tags, "one declaration of trickle-answer")
	sort.Strings(attrs)
	sort.Strings(events)
	require.Equal(t, codeAttributes(t), attrs)
	require.Equal(t, codeEvents(t), events)
}

// TestTheTypesReadmeAndManifestNameEveryDialect holds the dialect
// attribute's values, wherever a page's author reads them, to the one
// list: stream.Dialects and auto.
func TestTheTypesReadmeAndManifestNameEveryDialect(t *testing.T) {
	want := []string{string(stream.DialectAuto)}
	for _, d := range stream.Dialects() {
		want = append(want, string(d))
	}
	sort.Strings(want)
	quoted := `"([a-z-]+)"`

	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "types", "trickle-answer.d.ts"))
	require.NoError(t, err)
	m := regexp.MustCompile(`\bdialect\?: ([^;]+);`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "the .d.ts types the dialect attribute")
	require.Equal(t, want, members(m[1], quoted), "trickle-answer.d.ts")

	b, err = os.ReadFile(filepath.Join("..", "..", "wasm", "web", "types", "custom-elements.json"))
	require.NoError(t, err)
	var manifest struct {
		Modules []struct {
			Declarations []struct {
				Attributes []struct{ Name, Description string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(b, &manifest))
	var desc string
	for _, mod := range manifest.Modules {
		for _, d := range mod.Declarations {
			for _, a := range d.Attributes {
				if a.Name == "dialect" {
					desc = a.Description
				}
			}
		}
	}
	// The description is the list: "auto (default), openai, … or plain."
	var listed []string
	for _, w := range members(desc, `([a-z][a-z-]*)`) {
		if w != "default" && w != "or" {
			listed = append(listed, w)
		}
	}
	require.Equal(t, want, listed, "custom-elements.json: %q", desc)

	b, err = os.ReadFile(filepath.Join("..", "..", "docs", "reference", "trickle-answer.md"))
	require.NoError(t, err)
	m = regexp.MustCompile("(?m)^\\| `dialect` \\| (.+) \\|$").FindStringSubmatch(string(b))
	require.NotNil(t, m, "the reference's attribute table has the dialect row")
	require.Equal(t, want, members(m[1], "`([a-z-]+)`"), "docs/reference/trickle-answer.md")
}

// englishStrings are the contract's strings (wasm/protocol.Strings,
// which wasm/web/contract.js's ENGLISH is generated from): every key and
// its English, in order.
func englishStrings(t *testing.T) (keys []string, english map[string]string) {
	t.Helper()
	english = map[string]string{}
	for _, s := range protocol.Strings {
		keys = append(keys, s.Key)
		english[s.Key] = s.English
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "strings.js"))
	require.NoError(t, err)
	require.Contains(t, string(b), "export { ENGLISH };", "strings.js's English is the contract's")
	return keys, english
}

func TestTheStringsAreOneSetInGoJavaScriptTheTypesAndTheDocs(t *testing.T) {
	keys, english := englishStrings(t)
	sorted := slices.Sorted(slices.Values(keys))
	for _, k := range element.StringKeys() {
		require.Contains(t, english, k, "Go's %s is not in strings.js", k)
		goText, _ := element.English.Get(k)
		require.Equal(t, goText, english[k], "%s: Go's English and strings.js's", k)
	}
	require.Equal(t, sorted, members(dts(t, "interface", "TrickleStrings"), `^  ([a-zA-Z]+): string;`), "the .d.ts's TrickleStrings and strings.js's keys")

	var chatKeys []string
	for _, k := range sorted {
		if strings.HasPrefix(k, "chat") {
			chatKeys = append(chatKeys, k)
		}
	}
	tables := references(t, "strings", "docs/package.md", answerPage)
	tables[chatPage] = reference(t, chatPage, "strings")
	for doc, table := range tables {
		want := sorted
		if doc == chatPage {
			want = chatKeys // the chat's own words; its page points to the answer's for the rest
		}
		require.Equal(t, want, firstColumn(table), "%s's strings table and strings.js's keys", doc)
		for _, line := range strings.Split(table, "\n") {
			cells := strings.Split(line, " | ")
			if len(cells) < 3 || !strings.HasPrefix(cells[0], "| `") {
				continue
			}
			k := strings.Trim(cells[0], "| `")
			require.Equal(t, english[k], strings.ReplaceAll(cells[1], `\|`, "|"), "%s's English of %s", doc, k)
		}
	}

	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "web", "types", "trickle-answer.d.ts"))
	require.NoError(t, err)
	m := regexp.MustCompile(`export type TrickleErrorReason =([^;]+);`).FindStringSubmatch(string(b))
	require.NotNil(t, m)
	for _, r := range members(m[1], `"(\w+)"`) {
		if r != "call" {
			require.Contains(t, element.StringKeys(), r, "trickle-error's reason %q is no reason's key", r)
		}
	}
}
