// Package offheap gives byte buffers outside the Go heap (anonymous private
// mappings) where the system has them: the collector neither scans them nor
// sizes its headroom (GOGC) from them, and Free returns their memory to the
// system at once instead of at a later collection.
package offheap

// Alloc returns n zeroed bytes outside the Go heap, or on the heap (ok false)
// when no mapping is available; a buffer with ok true must be given to Free
// once nothing refers to its bytes any more.
func Alloc(n int) (b []byte, ok bool) { return alloc(n, false) }

// AllocPopulated is Alloc for a buffer that will be written whole soon: where
// the system can (Linux, MAP_POPULATE), its pages are made resident by the
// mapping call itself instead of one page fault each when first written (a
// fault costs a trap into the kernel and back, dearer in a virtual machine).
func AllocPopulated(n int) (b []byte, ok bool) { return alloc(n, true) }

func alloc(n int, populate bool) (b []byte, ok bool) {
	if n > 0 {
		if b, ok = mapBytes(n, populate); ok {
			return b, true
		}
	}
	return make([]byte, n), false
}

// Free releases a buffer Alloc returned with ok true: any later access to its
// bytes is a fault.
func Free(b []byte) { unmapBytes(b) }

// Mapping holds a buffer Alloc returned with ok true until Release, which
// frees it once however often it is called: an owner's Close and the cleanup
// that stands in for a forgotten Close may both call it, and a second Free
// could unmap a later mapping at the same address.
type Mapping struct{ B []byte }

// Release frees the buffer, if it holds one, and forgets it.
func (m *Mapping) Release() {
	if m.B != nil {
		Free(m.B)
		m.B = nil
	}
}
