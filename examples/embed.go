package examples

import (
	"embed"
	"io/fs"
)

//go:embed widget
var widget embed.FS

// Widget is the built widget (`make widget` writes it): trickle.js,
// wasm_exec.js, the .wasm and their compressed copies. Before a build it
// holds only a README.
func Widget() fs.FS {
	sub, err := fs.Sub(widget, "widget")
	if err != nil {
		panic(err) // the directory is embedded above; cannot happen
	}
	return sub
}
