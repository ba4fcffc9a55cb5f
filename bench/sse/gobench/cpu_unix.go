//go:build unix

package main

import "syscall"

// cpuSeconds is the process's user+system CPU time. The machine the
// benchmark runs on is shared, so CPU time is steadier than wall time; both
// sides of the comparison measure it the same way (Node: process.cpuUsage).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
