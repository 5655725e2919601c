package baseline

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapArena returns n zeroed values of T outside the Go heap: an anonymous
// private mapping, with transparent huge pages asked for. The baseline's
// records, top-k hashes and table (about 130 bytes a case) live there, so (1)
// the collector's heap goal is not sized from them (with them on the heap it
// let the case stream's garbage grow by as much again) and (2) they fault in
// 2 MiB at a time instead of 4 KiB (issue 23: page faults were a tenth of the
// run's CPU). T must hold no pointers. ok is false when the mapping fails;
// the caller then uses the heap. elem is the size of a T in bytes. unmapArena
// releases it.
func mapArena[T any](n, elem int) (s []T, mem []byte, ok bool) {
	size := n * elem
	if n <= 0 || elem <= 0 || size/n != elem {
		return nil, nil, false
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // advice: without it, 4 KiB pages
	// The mapping is page-aligned and size bytes long: n values exactly.
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n), mem, true //nolint:gosec // G103: reviewed, see above
}

func unmapArena(mem []byte) {
	if mem != nil {
		_ = unix.Munmap(mem)
	}
}
