package examples

import (
	"embed"
	"io/fs"
)

//go:embed pages
var pages embed.FS

// Pages are the example pages (index, answer/, chat/, transports/, a11y/): static
// HTML, CSS and a little JavaScript that wires controls to the widget. The
// relay serves them at /examples/; they load the widget from /trickle/.
func Pages() fs.FS {
	sub, err := fs.Sub(pages, "pages")
	if err != nil {
		panic(err) // the directory is embedded above; cannot happen
	}
	return sub
}
