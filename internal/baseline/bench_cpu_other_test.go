//go:build !unix

package baseline

// processCPU is not measured here (0).
func processCPU() int64 { return 0 }
