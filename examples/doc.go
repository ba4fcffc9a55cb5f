// Package examples holds the pages a person opens (the drop-in answer, SSE
// vs WebSocket side by side, the screen-reader lab), embedded so the
// trickle binary is self-contained. The built widget they load is the
// product, in package assets.
package examples
