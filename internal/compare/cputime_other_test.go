//go:build !unix

package compare_test

// cpuTime is unknown here (-1).
func cpuTime() int64 { return -1 }
