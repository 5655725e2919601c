package gate

import (
	"runtime"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/offheap"
)

// idArena holds the id log's full chunks and its blocks of ids outside the Go
// heap where the system allows (internal/offheap): they grow with the number
// of cases, and on the heap the collector's headroom (GOGC) would grow with
// them, letting the stream's garbage double them in the peak memory. Regions
// of idRegion bytes are carved in order; all are returned to the system when
// the log is unreachable (a cleanup) or the process exits.
type idArena struct {
	regions [][]byte // mapped
	free    []byte   // the rest of the last region
}

const idRegion = 64 * idChunkB // 3 MiB

// alloc returns n zeroed bytes, 8-aligned.
func (a *idArena) alloc(owner *idLog, n int) []byte {
	n = (n + 7) &^ 7
	if len(a.free) < n {
		b, mapped := offheap.AllocPopulated(max(n, idRegion))
		if !mapped {
			return b[:n:n] // on the heap
		}
		if len(a.regions) == 0 {
			runtime.AddCleanup(owner, (*idArena).release, a)
		}
		a.regions = append(a.regions, b)
		a.free = b
	}
	b := a.free[:n:n]
	a.free = a.free[n:]
	return b
}

// release returns the regions to the system.
func (a *idArena) release() {
	for _, r := range a.regions {
		offheap.Free(r)
	}
	a.regions, a.free = nil, nil
}

// chunk returns room for n entries: hashes and lines.
func (a *idArena) chunk(owner *idLog, n int) ([]uint64, []uint32) {
	b := a.alloc(owner, 12*n)
	h := unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)      //nolint:gosec // G103: 8-aligned memory of the arena, pointer-free
	line := unsafe.Slice((*uint32)(unsafe.Pointer(&b[8*n])), n) //nolint:gosec // G103: the same
	return h[:0], line[:0]
}
