//go:build js && wasm

// Command widget is the <trickle-answer> element's Go side, compiled to
// WebAssembly by wasm/internal/build and booted by trickle.js.
package main

import "github.com/trickle-dev/trickle/wasm"

func main() { wasm.Boot() }
