//go:build js && wasm && trickle_highlight

package main

import (
	"github.com/trickle-dev/trickle/internal/widget"
	"github.com/trickle-dev/trickle/render/highlight"
)

// The highlighting variant (wasm/internal/build builds it with the tag
// trickle_highlight): elements with the highlight attribute get chroma.
func init() { widget.Highlighter = append(widget.Highlighter, highlight.Option()) }
