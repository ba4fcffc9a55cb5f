// Package assets holds the built widget that the trickle binary serves at
// /trickle/: `make build` writes it into assets/widget (trickle.js, the
// .wasm builds, the worker script, wasm_exec.js, the stylesheets, their
// compressed copies and manifest.json), and this package embeds it. Before
// a build the folder holds only its README, and the relay says so.
//
// It never holds sources: those are in wasm/ (Go) and wasm/web (the
// page's JavaScript).
package assets

import (
	"embed"
	"io/fs"
)

//go:embed widget
var widget embed.FS

// Widget is the built widget, rooted at the folder that holds trickle.js.
func Widget() fs.FS {
	sub, err := fs.Sub(widget, "widget")
	if err != nil {
		panic(err) // the directory is embedded above; cannot happen
	}
	return sub
}
