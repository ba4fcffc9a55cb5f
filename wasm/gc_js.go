//go:build js && wasm

package wasm

import (
	"runtime"
	"runtime/debug"
	"syscall/js"

	"github.com/trickle-dev/trickle/wasm/element"
)

// gc paces Go's collector for every element on the page (see element.GCPacer).
var gc = &element.GCPacer{}

// collectBetweenAnswers sets the collector up as element.GCPacer describes: no
// proportional pacing, a memory limit, a collection at idle time after
// answers. The collection runs on its own goroutine, which Go runs right
// after the idle callback returns, still in the browser's idle period.
func collectBetweenAnswers() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(element.MemoryLimit)
	now := make(chan struct{}, 1)
	go func() {
		for range now {
			runtime.GC()
		}
	}()
	gc.Collect = func() {
		select {
		case now <- struct{}{}:
		default:
		}
	}
	onIdle := newFunc(func(js.Value, []js.Value) any {
		gc.OnIdle()
		return nil
	})
	gc.Idle = func() {
		if ric := js.Global().Get("requestIdleCallback"); ric.Type() == js.TypeFunction {
			ric.Invoke(onIdle, map[string]any{"timeout": 5000})
			return
		}
		js.Global().Call("setTimeout", onIdle, 1000)
	}
}
