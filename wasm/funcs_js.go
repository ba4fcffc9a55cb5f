//go:build js && wasm

package wasm

import (
	"sync/atomic"
	"syscall/js"
)

// liveFuncs counts the js.Funcs the package holds: every one is made by
// newFunc and freed by releaseFunc (a test reads this file's package and
// fails on any other js.FuncOf), so the count the stats command reports
// is the truth a leak test can rely on.
var liveFuncs atomic.Int64

// newFunc is js.FuncOf, counted. f must never block (syscall/js: a
// blocked callback deadlocks the program); every callback here only
// queues a message for the host's loop.
func newFunc(f func(this js.Value, args []js.Value) any) js.Func {
	liveFuncs.Add(1)
	return js.FuncOf(f)
}

// releaseFunc is js.Func.Release, counted.
func releaseFunc(f js.Func) {
	liveFuncs.Add(-1)
	f.Release()
}

func arg0(args []js.Value) js.Value {
	if len(args) == 0 {
		return js.Undefined()
	}
	return args[0]
}
