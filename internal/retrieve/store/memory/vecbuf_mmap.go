//go:build linux || darwin || freebsd

package memory

import (
	"syscall"
	"unsafe"
)

// mapVecs returns n zeroed floats outside the Go heap (an anonymous private
// mapping), so the collector's headroom (GOGC) is not sized from the vectors.
// ok is false when the mapping fails; the caller then uses the heap.
func mapVecs(n int) (b []byte, v []float32, ok bool) {
	if n <= 0 {
		return nil, nil, false
	}
	b, err := syscall.Mmap(-1, 0, n*4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	// The mapping is page-aligned and n*4 bytes long: n float32s exactly.
	return b, unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), true //nolint:gosec // G103: reviewed, see above
}

// unmapVecs releases a mapping of mapVecs.
func unmapVecs(b []byte) { _ = syscall.Munmap(b) }
