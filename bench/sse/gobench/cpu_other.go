//go:build !unix && !js

package main

import "time"

var processStart = time.Now()

// cpuSeconds falls back to wall time where getrusage is missing.
func cpuSeconds() float64 { return time.Since(processStart).Seconds() }
