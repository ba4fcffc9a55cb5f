package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

const root = "../../.."

func readRepo(path string) ([]byte, error) { return os.ReadFile(filepath.Join(root, path)) }

// TestGeneratedFilesAreFresh regenerates every file from the table and
// fails when one on disk differs: run go generate ./wasm/protocol.
func TestGeneratedFilesAreFresh(t *testing.T) {
	out, err := outputs(tableOf(), readRepo)
	require.NoError(t, err)
	require.ElementsMatch(t, Outputs, slices.Collect(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	}))
	for _, path := range Outputs {
		have, err := readRepo(path)
		require.NoError(t, err)
		if want := string(out[path]); want != string(have) {
			t.Errorf("%s is stale: run go generate ./wasm/protocol (%s)", path, firstDifference(want, string(have)))
		}
	}
}

// firstDifference says where two texts first differ, by line.
func firstDifference(want, have string) string {
	w, h := strings.Split(want, "\n"), strings.Split(have, "\n")
	for i := 0; i < max(len(w), len(h)); i++ {
		var wl, hl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(h) {
			hl = h[i]
		}
		if wl != hl {
			return fmt.Sprintf("line %d is %q, the table makes it %q", i+1, hl, wl)
		}
	}
	return "same lines"
}

// TestGeneratingTwiceChangesNothing: the hand-written parts pass through
// and the generated ones are rewritten the same.
func TestGeneratingTwiceChangesNothing(t *testing.T) {
	once, err := outputs(tableOf(), readRepo)
	require.NoError(t, err)
	twice, err := outputs(tableOf(), func(path string) ([]byte, error) { return once[path], nil })
	require.NoError(t, err)
	for _, path := range Outputs {
		require.Equal(t, string(once[path]), string(twice[path]), path)
	}
}

// throwAway is an attribute no element has: a row added to a copy of the
// table.
var throwAway = protocol.Attribute{
	Name: "throw-away", Key: "throwAway", Type: `"yes" | "no"`, On: protocol.OnAnswer | protocol.OnChat,
	Doc: "An attribute only this test has.",
}

// TestAnAttributeAddedToTheTableReachesBothElementsTheirTypesAndTheManifest
// adds one row to a copy of the table, generates into a temporary copy of
// the files, and finds the attribute in both elements' lists (and the
// chat's forwards and the answer's command attributes), in both elements'
// .d.ts interfaces, in the React and Vue typings (tsc type-checks a TSX
// <trickle-chat throw-away="yes"> and refuses "maybe"), and in both
// declarations of the manifest.
func TestAnAttributeAddedToTheTableReachesBothElementsTheirTypesAndTheManifest(t *testing.T) {
	tab := tableOf()
	tab.Attributes = append(slices.Clone(tab.Attributes), throwAway)
	out, err := outputs(tab, readRepo)
	require.NoError(t, err)

	js := string(out[contractJS])
	require.Contains(t, js, `export const ATTR_THROW_AWAY = "throw-away";`)
	for _, list := range []string{"ANSWER_ATTRIBUTES", "CHAT_ATTRIBUTES", "CHAT_FORWARDS"} {
		m := regexp.MustCompile(`export const ` + list + ` = /\* @__PURE__ \*/ Object\.freeze\(\[([^\]]*)\]\);`).FindStringSubmatch(js)
		require.NotNil(t, m, list)
		require.Contains(t, strings.Split(m[1], ", "), `"throw-away"`, list)
	}
	require.Contains(t, js, `["throw-away", "throwAway", false, ""],`)

	// A row only the chat takes stays with the chat.
	tab.Attributes = append(tab.Attributes, protocol.Attribute{Name: "chat-only", Type: "string", On: protocol.OnChat, Doc: "Only a chat's."})
	only, err := outputs(tab, readRepo)
	require.NoError(t, err)
	for list, want := range map[string]bool{"ANSWER_ATTRIBUTES": false, "CHAT_ATTRIBUTES": true, "CHAT_FORWARDS": false} {
		m := regexp.MustCompile(`export const ` + list + ` = /\* @__PURE__ \*/ Object\.freeze\(\[([^\]]*)\]\);`).FindStringSubmatch(string(only[contractJS]))
		require.NotNil(t, m, list)
		require.Equal(t, want, slices.Contains(strings.Split(m[1], ", "), `"chat-only"`), list)
	}

	// Both reference pages list it in their generated attribute tables.
	for _, page := range []string{answerPage, chatPage} {
		_, table, ok := strings.Cut(string(out[page]), mdBegin("attributes")+"\n")
		require.True(t, ok, page)
		table, _, _ = strings.Cut(table, mdEnd("attributes"))
		require.Contains(t, table, "| `throw-away` | `yes`, `no` |", page)
	}

	dts := string(out[typesDTS])
	for _, iface := range []string{"TrickleAnswerAttributes", "TrickleChatAttributes"} {
		_, body, ok := strings.Cut(dts, "export interface "+iface+" {")
		require.True(t, ok, iface)
		body, _, _ = strings.Cut(body, "\n}")
		require.Contains(t, body, `"throw-away"?: "yes" | "no";`, iface)
	}

	var m manifestFile
	require.NoError(t, json.Unmarshal(out[manifest], &m))
	tags := map[string]bool{}
	for _, mod := range m.Modules {
		for _, d := range mod.Declarations {
			for _, a := range d.Attributes {
				if a.Name == "throw-away" {
					require.Equal(t, `"yes" | "no"`, a.Type.Text)
					tags[d.TagName] = true
				}
			}
		}
	}
	require.Equal(t, map[string]bool{"trickle-answer": true, "trickle-chat": true}, tags)

	// The typings, as a page's TypeScript sees them (tsc: not on js/wasm,
	// which runs no programs, nor under -short).
	if runtime.GOOS == "js" || testing.Short() {
		t.Skip("tsc runs natively, without -short")
	}
	tsc, err := filepath.Abs(filepath.Join(root, "wasm", "web", "node_modules", ".bin", "tsc"))
	require.NoError(t, err)
	if _, err := os.Stat(tsc); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no tsc (make test-js installs it): %v", err)
		}
		t.Skip("no tsc: make test-js installs it")
	}
	dir := t.TempDir()
	types := filepath.Join(dir, "types")
	require.NoError(t, os.MkdirAll(filepath.Join(types, "test"), 0o755))
	for _, path := range []string{typesDTS, reactDTS, vueDTS} {
		require.NoError(t, os.WriteFile(filepath.Join(types, filepath.Base(path)), out[path], 0o644))
	}
	config, err := readRepo("wasm/web/types/test/tsconfig.json")
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(config, &cfg))
	opts := cfg["compilerOptions"].(map[string]any)
	// The temporary folder has no node_modules: types come from the repository's.
	modules, err := filepath.Abs(filepath.Join(root, "wasm", "web", "node_modules"))
	require.NoError(t, err)
	opts["typeRoots"] = []string{filepath.Join(modules, "@types")}
	opts["baseUrl"] = "."
	paths := opts["paths"].(map[string]any)
	paths["react"] = []string{filepath.Join(modules, "@types", "react")}
	paths["react/*"] = []string{filepath.Join(modules, "@types", "react", "*")}
	paths["vue"] = []string{filepath.Join(modules, "vue")}
	config, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(types, "test", "tsconfig.json"), config, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(types, "test", "throw-away.tsx"), []byte(`import type {} from "trickle-answer/react";
import type {} from "trickle-answer/vue";
import type { GlobalComponents } from "vue";

export const answer = <trickle-answer throw-away="yes" />;
export const chat = <trickle-chat throw-away="no" />;
// @ts-expect-error not one of the attribute's values
export const bad = <trickle-chat throw-away="maybe" />;

type ChatProps = InstanceType<GlobalComponents["trickle-chat"]>["$props"];
type AnswerProps = InstanceType<GlobalComponents["trickle-answer"]>["$props"];
export const vueChat: ChatProps = { "throw-away": "yes" };
export const vueAnswer: AnswerProps = { "throw-away": "no" };
// @ts-expect-error not one of the attribute's values
export const vueBad: ChatProps = { "throw-away": "maybe" };
`), 0o644))
	cmd := exec.Command(tsc, "-p", filepath.Join(types, "test"))
	cmd.Dir = filepath.Join(root, "wasm", "web")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "tsc: %s", b)
}

// TestTheTableRefusesWhatTheOtherSidesCouldNotFollow: an attribute of no
// element, a name twice, a name that is no HTML attribute's, no doc.
func TestTheTableRefusesWhatTheOtherSidesCouldNotFollow(t *testing.T) {
	for name, row := range map[string]protocol.Attribute{
		"no element": {Name: "x", Type: "string", Doc: "x"},
		"twice":      protocol.Attributes[0],
		"upper case": {Name: "X", Type: "string", On: protocol.OnAnswer, Doc: "x"},
		"no doc":     {Name: "x", Type: "string", On: protocol.OnAnswer},
	} {
		tab := tableOf()
		tab.Attributes = append(slices.Clone(tab.Attributes), row)
		_, err := outputs(tab, readRepo)
		require.Error(t, err, name)
	}
}

// TestTheStatusesAreTheAnnouncersWords: the table's English of the
// statuses is what package a11y announces by default.
func TestTheStatusesAreTheAnnouncersWords(t *testing.T) {
	require.Equal(t, a11y.StatusResponding, protocol.EnglishResponding)
	require.Equal(t, a11y.StatusComplete, protocol.EnglishComplete)
	require.Equal(t, a11y.StatusStopped, protocol.EnglishStopped)
	require.Equal(t, a11y.StatusIncomplete, protocol.EnglishIncomplete)
	require.Equal(t, a11y.StatusFailed, protocol.EnglishFailed)
}

// TestTheStylesheetsStallNoticeIsTheTables: the stall notice the
// stylesheet shows before the page sets --trickle-stall-text.
func TestTheStylesheetsStallNoticeIsTheTables(t *testing.T) {
	css, err := readRepo("wasm/web/trickle.css")
	require.NoError(t, err)
	m := regexp.MustCompile(`var\(--trickle-stall-text, ("[^"]*")\)`).FindSubmatch(css)
	require.NotNil(t, m, "trickle.css lost its stall notice")
	require.Equal(t, quote(protocol.EnglishStalled), string(m[1]))
}

func TestUpperNamesJavaScriptConstants(t *testing.T) {
	for in, want := range map[string]string{
		"image-origins": "IMAGE_ORIGINS", "chatCutOff": "CHAT_CUT_OFF", "metricTTFB": "METRIC_TTFB",
		"metricTTFAT": "METRIC_TTFAT", "aTool": "A_TOOL", "copy": "COPY", "metricTokensPerSecond": "METRIC_TOKENS_PER_SECOND",
	} {
		require.Equal(t, want, upper(in), in)
	}
}

// TestThePagesModulesSpellNoContractName: outside the generated
// contract.js, no module of the page reads, sets or forwards an
// attribute, sends or matches a message type or command kind, looks up
// a word by a spelled name, or reads an update's, a patch's or an
// ending's key: they import the contract's constants, so a name the table
// lacks fails the bundle instead of drifting.
func TestThePagesModulesSpellNoContractName(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "wasm", "web", "*.js"))
	require.NoError(t, err)
	early, err := filepath.Glob(filepath.Join(root, "wasm", "web", "early", "*.js"))
	require.NoError(t, err)
	files = append(files, early...)
	var names []string
	for _, a := range protocol.Attributes {
		names = append(names, regexp.QuoteMeta(a.Name))
	}
	var kinds []string
	for _, m := range protocol.Messages {
		kinds = append(kinds, m.Type)
	}
	for _, k := range protocol.Kinds {
		kinds = append(kinds, string(k.Kind))
	}
	var keys []string
	for _, s := range protocol.Strings {
		keys = append(keys, s.Key)
	}
	wire := func(ks ...[]protocol.Key) string {
		var out []string
		for _, k := range slices.Concat(ks...) {
			out = append(out, regexp.QuoteMeta(k.Key))
		}
		return strings.Join(out, "|")
	}
	updates, patches, endings := wire(protocol.UpdateKeys), wire(protocol.PatchKeys), wire(protocol.EndKeys)
	all := wire(protocol.UpdateKeys, protocol.PatchKeys, protocol.EndKeys)
	// The update's keys, where the page reads them (not early/: the early
	// view reads the model's stream, never Go's updates). The modules name
	// an update u, a patch p and an ending end; merge.js folds two
	// updates or patches, a and b, into m.
	keyed := []*regexp.Regexp{
		// u.reset, u?.p, p.keep, end.msg
		regexp.MustCompile(`\bu\??\.(?:` + updates + `)\b`),
		regexp.MustCompile(`\bp\??\.(?:` + patches + `)\b`),
		regexp.MustCompile(`\bend\??\.(?:` + endings + `)\b`),
		// u["reset"], p['keep']
		regexp.MustCompile(`\[\s*["'](?:` + all + `)["']\s*\]`),
	}
	folded := []*regexp.Regexp{
		// a.end, b.keep, m.text = …, { ...a, reset: a.reset }
		regexp.MustCompile(`\b[abm]\??\.(?:` + all + `)\b`),
		regexp.MustCompile(`[{,]\s*(?:` + all + `)\s*[:,}]`),
	}
	spelled := []*regexp.Regexp{
		// el.getAttribute("endpoint"), hasAttribute, setAttribute, removeAttribute
		regexp.MustCompile(`(?:get|has|set|remove)Attribute\("(` + strings.Join(names, "|") + `)"`),
		// a list of attribute names: ["endpoint", "transport", …]
		regexp.MustCompile(`\[\s*"(` + strings.Join(names, "|") + `)",\s*"`),
		// { t: "ask" }, m.t === "ready", case "frame":
		regexp.MustCompile(`(?:\bt: |\.t [!=]== |case )"(` + strings.Join(kinds, "|") + `)"`),
		// wordOf(el, "copy"), w("retry"), a stored word: own.stalled
		regexp.MustCompile(`(?:wordOf\([^,()]+, |\bw\()"(` + strings.Join(keys, "|") + `)"`),
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".test.js") || filepath.Base(f) == "contract.js" {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		checked++
		res := spelled
		if filepath.Base(filepath.Dir(f)) == "web" {
			res = slices.Concat(spelled, keyed)
		}
		if filepath.Base(f) == "merge.js" {
			res = slices.Concat(res, folded)
		}
		for _, re := range res {
			for _, m := range re.FindAllString(string(b), -1) {
				t.Errorf("%s spells %s: import its constant from contract.js", filepath.Base(f), m)
			}
		}
	}
	require.Greater(t, checked, 10)
}
