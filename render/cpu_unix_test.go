//go:build unix

package render

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time (user + system, all threads) the process has used.
// Benchmarks report it per op beside wall time: the development machine is
// shared, and wall time there measures the neighbours too.
func cpuNow() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
