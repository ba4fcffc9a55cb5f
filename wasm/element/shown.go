// What the page shows beside the markdown (tool calls, how an answer
// ended), and the warm-up that runs a small answer through a whole Session.

package element

import (
	"strings"
	"time"

	"github.com/trickle-dev/trickle/internal/htmlx"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// ToolsHTML shows tool calls in the words of w (English when nil):
// "Calling name…" while the call streams, "Called name" and its arguments
// once complete (never half an argument object), so a finished call never
// reads as one still in progress, and under it what the tool gave when
// the backend ran it. Everything from the model, and the page's words, is
// escaped.
func ToolsHTML(calls []stream.ToolCall, w *Strings) string {
	if len(calls) == 0 {
		return ""
	}
	if w == nil {
		w = &English
	}
	var b strings.Builder
	for _, c := range calls {
		name := c.Name
		if name == "" {
			name = w.ATool
		}
		words := w.Called
		if !c.Complete {
			words = w.Calling
		}
		before, after, ok := strings.Cut(words, "{name}")
		if !ok {
			before, after = words+" ", ""
		}
		b.WriteString(`<div data-trickle="tool"><p>`)
		b.WriteString(htmlx.Escape(before))
		b.WriteString(`<code>`)
		b.WriteString(htmlx.Escape(name))
		b.WriteString(`</code>`)
		b.WriteString(htmlx.Escape(after))
		if !c.Complete {
			b.WriteString(`…</p></div>`)
			continue
		}
		b.WriteString(`</p><pre><code>`)
		b.WriteString(htmlx.Escape(c.Arguments))
		b.WriteString(`</code></pre>`)
		// The backend ran the tool and sent what it gave (the AI SDK's
		// tool-output-*): shown under the call, as text.
		switch {
		case c.OutputError != "":
			b.WriteString(`<p data-trickle="tool-output">`)
			b.WriteString(htmlx.Escape(stdlite.ReplaceAll(w.ToolFailed, "{error}", c.OutputError)))
			b.WriteString(`</p>`)
		case c.Output != "":
			b.WriteString(`<pre data-trickle="tool-output"><code>`)
			b.WriteString(htmlx.Escape(c.Output))
			b.WriteString(`</code></pre>`)
		}
		b.WriteString(`</div>`)
	}
	return b.String()
}

// WarmUp runs a small answer through a whole Session once — SSE parsing,
// JSON decoding, goldmark, the speech projection — so the first real frame
// does not pay for first calls (in the browser, WebAssembly functions are
// compiled on their first call). Call it when the page is idle. It returns
// the sample's HTML (every frame's settled HTML, in order), for warming the
// browser's own HTML parser. A policy NewSession refuses warms nothing
// (the HTML is empty): the answer that uses it reports the error.
func WarmUp(policy render.Policy) string {
	_, html, _ := warmSession(policy)
	return html
}

func warmSession(policy render.Policy) (*Session, string, error) {
	s, err := NewSession(Config{Policy: policy, Now: func() time.Time { return time.Time{} }})
	if err != nil {
		return nil, "", err
	}
	var b []byte
	for i := 0; i < len(warmSample); i += 24 {
		b = append(b, `data: {"choices":[{"index":0,"delta":{"content":`...)
		b = jsonx.AppendString(b, warmSample[i:min(len(warmSample), i+24)])
		b = append(b, "}}]}\n\n"...)
	}
	b = append(b, "data: [DONE]\n\n"...)
	_ = s.Write(b)
	p := s.Frame()
	html, tail := p.Append, p.Tail
	s.End(nil)
	p = s.Frame()
	html += p.Append
	if p.TailChanged {
		tail = p.Tail
	}
	if p.Unwrap {
		html += tail
	}
	return s, html, nil
}

const warmSample = "# Warm\n\nSome *emphasis*, `code` and a [link](https://example.com).\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {}\n```\n\n> quote\n"
