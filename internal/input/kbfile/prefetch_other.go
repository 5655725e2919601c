//go:build !amd64

package kbfile

import "unsafe"

// prefetchSlots does nothing on this architecture: a prefetch is a hint,
// never needed for a result.
func prefetchSlots(unsafe.Pointer, []uint64) {}
