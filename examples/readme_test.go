package examples_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
)

// readmeCode is the first ```lang block after the heading in README.md.
func readmeCode(t *testing.T, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	require.True(t, ok, "README.md has no %q", heading)
	_, after, ok = strings.Cut(after, "```"+lang+"\n")
	require.True(t, ok, "README.md has no %s block under %q", lang, heading)
	code, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	return code
}

// The README is a front door: at most 150 lines, in the order a newcomer
// needs it — what Trickle is, the two commands, a chat with a tool on a
// page, what a backend must send with a Node server, React and Vue, the
// relay before a real model, the reference.
func TestTheReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	require.LessOrEqual(t, strings.Count(readme, "\n"), 150, "README.md is at most 150 lines")
	last := -1
	for _, part := range []string{"make run", "<!-- chat-snippet", "chat.tools", "## Your backend", "```js", "```tsx", "<trickle-chat", "```vue", "--upstream", "docs/reference/trickle-answer.md", "docs/reference/trickle-chat.md", "docs/reference/relay-api.md"} {
		i := strings.Index(readme[last+1:], part)
		require.GreaterOrEqual(t, i, 0, "README.md has %q after what comes before it", part)
		last += 1 + i
	}
}

// The README's ten-line Node backend, run as it is (on a free port), serves
// a <trickle-answer> its answer through the page's own origin.
func TestTheReadmesNodeBackendServesAnAnswer(t *testing.T) {
	tab, _ := startExamples(t)
	code := readmeCode(t, "## Your backend", "js")
	const listen = ".listen(3000);"
	require.Contains(t, code, listen)
	code = strings.Replace(code, listen, `.listen(0, "127.0.0.1", function () { console.log("listening http://127.0.0.1:" + this.address().port); });`, 1)
	file := filepath.Join(t.TempDir(), "backend.mjs")
	require.NoError(t, os.WriteFile(file, []byte(code), 0o644))
	backend := browsertest.StartNode(t, filepath.Dir(file), nil, file)

	_, rl := relaytest.Start(t, relay.WithWidget(assets.Widget()))
	target, err := url.Parse(backend)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/chat" {
			// Full duplex, or the server closes the request's body when
			// the proxy writes the answer's headers, and a transport
			// still reading it (to find its end) fails and closes the
			// backend's connection mid-answer.
			if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
				t.Errorf("page server: %v", err)
			}
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><meta charset=utf-8><title>my page</title>
<script type="module" src="%s/trickle/trickle.js"></script>
<trickle-answer endpoint="/api/chat"></trickle-answer>`, rl.URL)
	}))
	t.Cleanup(page.Close)
	run(t, tab, 30*time.Second, chromedp.Navigate(page.URL+"/"))
	got := browsertest.Eval[map[string]string](t, tab, `(async () => {
		await customElements.whenDefined("trickle-answer");
		const a = document.querySelector("trickle-answer");
		const status = await a.ask("hello");
		return { status, text: a.text, html: a.querySelector('[data-trickle="content"]').innerHTML };
	})()`)
	require.Equal(t, "complete", got["status"])
	require.Equal(t, "Hello from **your own** backend. ", got["text"])
	require.Contains(t, got["html"], "<strong>your own</strong>")
}

// The README's React snippet type-checks with the package's typings
// (tsc from wasm/web, which make test-js installs).
func TestTheReadmesReactSnippetTypeChecks(t *testing.T) {
	tsx := readmeCode(t, "## React and Vue", "tsx")
	web, err := filepath.Abs(filepath.Join("..", "wasm", "web"))
	require.NoError(t, err)
	tsc := filepath.Join(web, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("wasm/web/node_modules has no tsc: make test-js installs it")
		}
		t.Skip("wasm/web/node_modules has no tsc: run make test-js")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "readme.tsx"), []byte(tsx), 0o644))
	types := filepath.Join(web, "types")
	config := fmt.Sprintf(`{"compilerOptions": {"strict": true, "noEmit": true, "target": "ES2022", "module": "ESNext",
		"moduleResolution": "bundler", "jsx": "react-jsx", "lib": ["ES2022", "DOM", "DOM.Iterable"], "types": [],
		"typeRoots": [%q], "baseUrl": %q,
		"paths": {"trickle-answer": [%q], "trickle-answer/react": [%q], "react": [%q], "react/jsx-runtime": [%q]}},
		"include": ["readme.tsx"]}`,
		filepath.Join(web, "node_modules", "@types"), dir,
		filepath.Join(types, "trickle-answer.d.ts"), filepath.Join(types, "react.d.ts"),
		filepath.Join(web, "node_modules", "@types", "react", "index.d.ts"), filepath.Join(web, "node_modules", "@types", "react", "jsx-runtime.d.ts"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(config), 0o644))
	out, err := exec.Command(tsc, "-p", dir).CombinedOutput()
	require.NoError(t, err, "tsc on the README's React snippet:\n%s", out)
}

// The README's Vue snippet compiles as a single-file component with Vue's
// own compiler (from wasm/web, which make test-js installs), its element
// taken as a custom element as the README says to configure it.
func TestTheReadmesVueSnippetCompiles(t *testing.T) {
	sfc := readmeCode(t, "## React and Vue", "vue")
	web, err := filepath.Abs(filepath.Join("..", "wasm", "web"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(web, "node_modules", "vue")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("wasm/web/node_modules has no vue: make test-js installs it")
		}
		t.Skip("wasm/web/node_modules has no vue: run make test-js")
	}
	file := filepath.Join(t.TempDir(), "Readme.vue")
	require.NoError(t, os.WriteFile(file, []byte(sfc), 0o644))
	script := `import { readFileSync } from "node:fs";
import { parse, compileScript, compileTemplate } from "vue/compiler-sfc";
const { descriptor, errors } = parse(readFileSync(process.argv[1], "utf8"), { filename: "Readme.vue" });
if (errors.length) throw errors[0];
const script = compileScript(descriptor, { id: "readme", inlineTemplate: true,
  templateOptions: { compilerOptions: { isCustomElement: (tag) => tag.startsWith("trickle-") } } });
const tpl = compileTemplate({ source: descriptor.template.content, filename: "Readme.vue", id: "readme",
  compilerOptions: { isCustomElement: (tag) => tag.startsWith("trickle-") } });
if (tpl.errors.length) throw new Error(String(tpl.errors[0]));
if (!tpl.code.includes('"trickle-chat"')) throw new Error("the template does not render <trickle-chat> as a custom element");
console.log(script.content.length > 0 ? "compiled" : "empty");`
	cmd := exec.Command("node", "--input-type=module", "-e", script, file)
	cmd.Dir = web
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "Vue's compiler on the README's snippet:\n%s", out)
	require.Equal(t, "compiled", strings.TrimSpace(string(out)))
}
