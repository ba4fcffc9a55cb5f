// The React peers of the browser benchmark: Streamdown and TanStack
// Markdown, each in a React 19 root of its own. Not served as it is: the
// Go driver (../peers.go) bundles this file with what it imports from
// ../node_modules (esbuild, React's production build) and serves the bundle
// as /peers/react.js.
//
// Both are configured as TanStack Markdown's own browser benchmark
// configures them (its streaming-browser harness), so that the figures
// stand beside the table it publishes:
//   - Streamdown in streaming mode (incomplete-markdown repair and block
//     memoization on, its defaults), no animation, no controls, no line
//     numbers, and plain <pre>/<code> for code (no highlighter installed);
//     its parsing, GFM and sanitization as they come.
//   - TanStack Markdown's React <Markdown> with its streaming extension,
//     front matter and heading ids off (its AI-streaming guide).
// Each update renders the whole text so far (both reparse it: that is how
// they are used) and commits synchronously (flushSync), inside the page's
// animation frame as the other renderers write theirs.
import { createElement as h } from "react";
import { flushSync } from "react-dom";
import { createRoot } from "react-dom/client";
import { Streamdown } from "streamdown";
import { Markdown } from "@tanstack/markdown/react";
import { streamingMarkdownExtension } from "@tanstack/markdown/extensions/streaming";

const plainCode = {
  pre: ({ children }) => h("pre", null, children),
  code: ({ children, className }) => h("code", { className }, children),
};
const tanstackExtensions = [streamingMarkdownExtension()];

function element(name, text, streaming) {
  if (name === "streamdown") {
    return h(Streamdown, {
      mode: "streaming", isAnimating: streaming, animated: false, controls: false, lineNumbers: false, components: plainCode,
    }, text);
  }
  if (name === "tanstack") {
    return h(Markdown, { extensions: tanstackExtensions, frontmatter: false, headingIds: false }, text);
  }
  throw new Error(`unknown React peer ${name}`);
}

// mount makes a root for peer name ("streamdown" or "tanstack") in box:
// update(text) renders the text so far, finish() the end of the stream
// (Streamdown renders once more with isAnimating off).
export function mount(name, box) {
  const root = createRoot(box);
  let last = "";
  const render = (text, streaming) => flushSync(() => root.render(element(name, text, streaming)));
  return {
    update(text) {
      last = text;
      render(text, true);
    },
    finish() {
      if (name === "streamdown") render(last, false);
    },
  };
}
