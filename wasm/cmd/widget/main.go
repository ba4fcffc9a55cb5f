//go:build js && wasm

// Command widget is the <trickle-answer> element's Go side, compiled to
// WebAssembly by wasm/internal/build and booted by trickle.js.
package main

import "syscall/js"

func main() {
	api := js.Global().Get("Object").New()
	js.Global().Call("__trickleBoot", api)
	select {}
}
