//go:build !(linux || darwin || freebsd)

package memory

// mapVecs is not available here: the vectors live on the Go heap.
func mapVecs(int) ([]byte, []float32, bool) { return nil, nil, false }

func unmapVecs([]byte) {}
