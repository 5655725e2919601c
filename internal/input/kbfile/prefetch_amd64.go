package kbfile

import "unsafe"

// prefetchSlots hints into every cache level (PREFETCHT0) the 16-byte short
// slots base[idx[i]] for each i. A prefetch never faults, loads nothing into
// a register and changes no memory: an index past the table costs a wasted
// hint at most.
//
//go:noescape
func prefetchSlots(base unsafe.Pointer, idx []uint64)
