//go:build js

package main

import "syscall/js"

// cpuSeconds is Node's process.cpuUsage() (user+system, the whole process),
// the same clock peer.mjs reads.
func cpuSeconds() float64 {
	u := js.Global().Get("process").Call("cpuUsage")
	return (u.Get("user").Float() + u.Get("system").Float()) / 1e6
}
