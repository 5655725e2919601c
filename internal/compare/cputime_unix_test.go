//go:build unix

package compare_test

import "syscall"

// cpuTime is the CPU time (user + system) this process has used, in
// nanoseconds: on a shared machine the benchmarks report it beside the wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
