//go:build js && wasm && trickle_highlight

package main

import (
	"github.com/trickle-dev/trickle/render/highlight"
	"github.com/trickle-dev/trickle/wasm/element"
)

// The highlighting variant (wasm/internal/build builds it with the tag
// trickle_highlight): elements with the highlight attribute get chroma.
func init() { element.Highlighter = append(element.Highlighter, highlight.Option()) }
