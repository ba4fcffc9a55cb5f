package element

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files other tests read (wasm/web/early/testdata/requests.json)")

// earlyRequestCase is one ask command, as trickle.js sends it
// (JSON.stringify's text: reader.test.js checks that it is), and the fetch
// Go starts for it: the fixture the page's early request builder
// (wasm/web/early/request.js) must match byte for byte.
type earlyRequestCase struct {
	Name string `json:"name"`
	Cmd  string `json:"cmd"`
	// Want is nil when Go sends no fetch: it rejects the ask, or it goes
	// over a WebSocket.
	Want *earlyFetch `json:"want"`
}

type earlyFetch struct {
	URL     string      `json:"url"`
	Method  string      `json:"method"`
	Headers [][2]string `json:"headers"`
	Body    string      `json:"body"`
}

const earlyRequestsPath = "../../wasm/web/early/testdata/requests.json"

const askURL = `"url":"http://127.0.0.1:8080/v1/chat/completions"`

// earlyRequestCommands are asks of every kind the builder must get right:
// escaping (HTML characters, line and paragraph separators, controls,
// astral characters), key order (Go sorts by bytes, JavaScript by UTF-16
// units), nested order kept, numbers as written, the model and stream
// fields (a model only where the page gave one), the page's headers, and
// what Go refuses.
var earlyRequestCommands = []struct{ name, cmd string }{
	{"a prompt", `{"t":"ask",` + askURL + `,"model":"","headers":[],"prompt":"Explain streaming."}`},
	{"a prompt with the model attribute", `{"t":"ask",` + askURL + `,"model":"gpt-4o-mini","headers":[],"prompt":"Hi"}`},
	{"a prompt with characters JSON writers escape differently", `{"t":"ask",` + askURL + `,"model":"<m&m>","headers":[],"prompt":"<b>&amp;</b> ` + "\u2028\u2029" + ` \"q\" \\ \n\t\r\b\f\u0001\u001f ` + "\u007f é 🍵 \ufffd \ue000" + `"}`},
	{"an empty prompt", `{"t":"ask",` + askURL + `,"model":"","headers":[],"prompt":""}`},
	{"the page's headers, with its own Content-Type and Accept replaced", `{"t":"ask",` + askURL + `,"model":"","headers":[["Authorization","Bearer abc"],["content-type","text/plain"],["ACCEPT","*/*"],["X-Trace","1"]],"prompt":"Hi"}`},
	{"a body without model or stream", `{"t":"ask",` + askURL + `,"model":"","headers":[],"body":{"messages":[{"role":"user","content":"Hi"}],"temperature":0.2}}`},
	{"a body without model gets none from the attribute", `{"t":"ask",` + askURL + `,"model":"attr","headers":[],"body":{"messages":[]}}`},
	{"a body's model wins over the attribute", `{"t":"ask",` + askURL + `,"model":"attr","headers":[],"body":{"model":"mine","stream":false,"messages":[]}}`},
	{"a body's null model is kept", `{"t":"ask",` + askURL + `,"model":"attr","headers":[],"body":{"model":null}}`},
	{"a body's keys sorted by bytes, nested ones kept in order", `{"t":"ask",` + askURL + `,"model":"","headers":[],"body":{"9":5,"10":4,"zeta":{"b":1,"a":[3,{"y":null,"x":true}]},"é":1,"🍵":2,"` + "\ue000" + `":3,"Alpha":"<&>","":6}}`},
	{"a body's numbers as written", `{"t":"ask",` + askURL + `,"model":"","headers":[],"body":{"n":[1e+21,1.5,0,0.000001,1e-7,12345678901234567000]}}`},
	{"a body of an empty object", `{"t":"ask",` + askURL + `,"model":"","headers":[],"body":{}}`},
	{"a body that is an array", `{"t":"ask",` + askURL + `,"model":"","headers":[],"body":[1,2]}`},
	{"a body that is null", `{"t":"ask",` + askURL + `,"model":"","headers":[],"body":null}`},
	{"neither a prompt nor an object", `{"t":"ask",` + askURL + `,"model":"","headers":[],"type":"number"}`},
	{"the WebSocket transport", `{"t":"ask",` + askURL + `,"transport":"websocket","model":"","headers":[],"prompt":"Hi"}`},
	{"a page of the endpoint's origin declares resume", `{"t":"ask",` + askURL + `,"origin":"http://127.0.0.1:8080","model":"","headers":[],"prompt":"Hi"}`},
	{"a page of another origin does not declare resume", `{"t":"ask",` + askURL + `,"origin":"http://localhost:3000","model":"","headers":[],"prompt":"Hi"}`},
	{"a page's own resume header is kept", `{"t":"ask",` + askURL + `,"origin":"http://127.0.0.1:8080","model":"","headers":[["x-trickle-resume","off"]],"prompt":"Hi"}`},
	{"a stream() call", `{"t":"stream",` + askURL + `,"model":"","headers":[]}`},
}

func buildEarlyRequests(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"comment": "written by go test ./wasm/element -run TestTheEarlyRequestFixturesAreGosRequests -update; read by wasm/web/early/request.test.js",` + "\n" + `"cases": [` + "\n")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i, c := range earlyRequestCommands {
		require.True(t, json.Valid([]byte(c.cmd)), c.name)
		cmd, err := ParseCommand(c.cmd)
		require.NoError(t, err, c.name)
		ec := earlyRequestCase{Name: c.name, Cmd: c.cmd}
		if r, err := cmd.Request(); err == nil && !r.WebSocket && !r.Stream {
			// What wasm's open sends: fetchInit("POST", r.Headers, r.Body).
			ec.Want = &earlyFetch{URL: r.URL, Method: "POST", Headers: r.Headers, Body: r.Body}
		}
		require.NoError(t, enc.Encode(ec))
		b.Truncate(b.Len() - 1)
		if i < len(earlyRequestCommands)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

func TestTheEarlyRequestFixturesAreGosRequests(t *testing.T) {
	want := buildEarlyRequests(t)
	if *updateGolden {
		require.NoError(t, os.WriteFile(earlyRequestsPath, want, 0o644))
	}
	got, err := os.ReadFile(earlyRequestsPath)
	require.NoError(t, err, "run go test ./wasm/element -run %s -update", t.Name())
	require.Equal(t, string(want), string(got), "%s is stale: run go test ./wasm/element -run %s -update", earlyRequestsPath, t.Name())
}
