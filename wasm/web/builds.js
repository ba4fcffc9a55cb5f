// The builds of the widget a page can run: the default one (assets.js),
// and the highlighting one once it is registered (highlight-assets.js,
// imported by highlight.js). An entry that never imports highlight.js
// serves every element, with or without the highlight attribute, from the
// default build (the page's own highlighter still runs), and references
// one .wasm.

export const builds = {
  // { wasm: URL, css: URL } of the highlighting build, or null.
  highlight: null,
};

// useHighlightBuild registers the highlighting build's .wasm and
// stylesheet.
export function useHighlightBuild(wasm, css) {
  builds.highlight = { wasm, css };
}
