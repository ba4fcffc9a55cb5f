// Command floor is the size report's floor: goldmark with its GFM
// extensions and the Go runtime, and nothing of Trickle's. Built for
// js/wasm by wasm/internal/size, never run: what it weighs is the least a
// Go widget rendering GitHub-flavoured markdown with goldmark can weigh.
package main

import (
	"bytes"
	"os"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

func main() {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	var out bytes.Buffer
	for _, arg := range os.Args[1:] {
		if err := md.Convert([]byte(arg), &out); err != nil {
			os.Exit(1)
		}
	}
	os.Stdout.Write(out.Bytes())
}
