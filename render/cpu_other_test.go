//go:build !unix

package render

import "time"

// cpuNow is not available here (js/wasm); benchmarks report wall time only.
func cpuNow() (time.Duration, bool) { return 0, false }
