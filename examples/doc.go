// Package examples holds the pages a person opens (the drop-in answer, SSE
// vs WebSocket side by side, the screen-reader lab) and the built widget,
// embedded so the trickle binary is self-contained.
package examples
