//go:build !unix

package calibrate

// cpuTime is not measured here.
func cpuTime() int64 { return -1 }
