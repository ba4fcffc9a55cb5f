package element

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// framesFixture is what an element sends the page for one answer, and what
// the page must then show: wasm/protocol/testdata/frames.json, which
// the page's tests apply with the page's own code
// (wasm/web/test/protocol.test.js).
type framesFixture struct {
	Messages []json.RawMessage `json:"messages"`
	Text     string            `json:"text"`
	HTML     string            `json:"html"`
	Status   string            `json:"status"`
}

func TestTheFramesFixtureIsWhatAnElementSends(t *testing.T) {
	text := "# Weather\n\nIt is *sunny* in [Paris](https://example.com/paris), 24 °C.\n\n" +
		"1. Take water.\n2. Wear a hat.\n\n| city | °C |\n|---|---|\n| Paris | 24 |\n\n```go\nfmt.Println(\"hi\")\n```\n\n" +
		// A fence whose lines arrive cut: frames continue its last line in
		// place (a patch's trim).
		"```js\nconst t = 24 < 30 && \"sunny\";\nif (t) {\n  console.log(`${t} °C`);\n}\n```\n\nThat is all.\n"
	data := openAIChunks(t, text)

	env := newFakeEnv(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	var fx framesFixture
	send := func() {
		if e.Active() {
			e.Frame()
		}
		if u := e.TakeUpdates(nil); len(u) > 0 {
			fx.Messages = append(fx.Messages, protocol.AppendFrame(nil, u))
		}
	}
	e.Do(askCmd(t, 1, ""), env.now, nil)
	send()
	gen := env.conn().Gen
	require.True(t, e.Response(gen, Response{OK: true, StreamID: "s"}))
	for _, cut := range [][2]int{{0, 40}, {40, 333}, {333, 700}, {700, 1200}} {
		env.arrive(gen, data[min(cut[0], len(data)):min(cut[1], len(data))])
		send()
	}
	for at := 1200; at < len(data); at += 61 {
		env.arrive(gen, data[min(at, len(data)):min(at+61, len(data))])
		send()
	}
	fx.Text, fx.Status = text, "complete"
	fx.HTML = convert(t, text, RenderOptions(render.Policy{SameOrigin: origin}, render.WithFootnotePrefix(FootnotePrefix(1)))...)

	b, err := json.MarshalIndent(fx, "", " ")
	require.NoError(t, err)
	goldenFile(t, "../protocol/testdata/frames.json", append(b, '\n'))

	// And the ready message the page reads the status spacing from is
	// a11y's.
	ready, err := os.ReadFile("../protocol/testdata/ready.json")
	require.NoError(t, err)
	require.Equal(t, protocol.Ready("worker", a11y.MinGap)+"\n", string(ready))
}

func goldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv("TRICKLE_UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "TRICKLE_UPDATE_GOLDEN=1 go test ./wasm/element writes it")
	require.Equal(t, string(want), string(got), "%s is the protocol both sides read: change both, then rewrite it", path)
}
