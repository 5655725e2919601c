// Package offheap gives byte buffers outside the Go heap (anonymous private
// mappings) where the system has them: the collector neither scans them nor
// sizes its headroom (GOGC) from them, and Free returns their memory to the
// system at once instead of at a later collection.
package offheap

// Alloc returns n zeroed bytes outside the Go heap, or on the heap (ok false)
// when no mapping is available; a buffer with ok true must be given to Free
// once nothing refers to its bytes any more.
func Alloc(n int) (b []byte, ok bool) {
	if n > 0 {
		if b, ok = mapBytes(n); ok {
			return b, true
		}
	}
	return make([]byte, n), false
}

// Free releases a buffer Alloc returned with ok true: any later access to its
// bytes is a fault.
func Free(b []byte) { unmapBytes(b) }
