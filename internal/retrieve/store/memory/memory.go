// Package memory is the embedded vector store: exact cosine search over vectors
// kept in one contiguous []float32 (row-major, unit-normalised on Add; outside
// the Go heap where the system allows, sized once by Reserve), with
// queries processed in blocks (each stored vector is read once per block of
// queries, scored against 4 queries at a time) on GOMAXPROCS goroutines and a
// bounded min-heap per query for the top k (topk: by score rounded to 6
// significant digits, then by id, whatever order the records were added in).
package memory

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/offheap"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/internal/topk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// queryBlock is the number of queries scored in one pass over the vectors.
const queryBlock = 32

// Store is the in-process index. Add must not run concurrently with Search.
type Store struct {
	dim     int
	vecs    []float32        // len = n*dim; cap grown by grow only
	mem     *offheap.Mapping // the mapping behind vecs, if any
	ids     []string
	locale  []uint16 // locale code per record
	codes   map[string]uint16
	workers int
	byID    map[string]int32 // record index by id, built by Similarity
	rankMu  sync.Mutex
	ranks   []int32 // place in id order by record index, built by Search (tieRanks)
}

// New returns an empty store; workers <= 0 means GOMAXPROCS.
func New(workers int) *Store {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	s := &Store{codes: map[string]uint16{}, workers: workers, mem: &offheap.Mapping{}}
	// A store dropped without Close still returns its mapping.
	runtime.AddCleanup(s, (*offheap.Mapping).Release, s.mem)
	return s
}

// minMapped is the smallest vector buffer (in floats) kept outside the heap.
const minMapped = 1 << 18

// grow makes room for extra more floats in vecs. A buffer of at least
// minMapped floats is mapped outside the Go heap: the collector then sizes its
// headroom from the rest of the heap, not from the vectors, and the old buffer
// is released at once instead of waiting for a collection.
func (s *Store) grow(extra int) {
	need := len(s.vecs) + extra
	if need <= cap(s.vecs) {
		return
	}
	c := cap(s.vecs)
	newCap := max(need, c+c/4, 2*c, 1024)
	if c >= minMapped {
		newCap = max(need, c+c/4)
	}
	var b []byte // the mapping, if v is one
	var v []float32
	if newCap >= minMapped {
		var mapped bool
		b, mapped = offheap.Alloc(4 * newCap)
		// 4·newCap bytes, page-aligned (a mapping, or a heap buffer of 1 MiB
		// or more): newCap floats exactly.
		v = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), newCap) //nolint:gosec // G103: reviewed, see above
		if !mapped {
			b = nil
		}
	} else {
		v = make([]float32, newCap)
	}
	v = v[:len(s.vecs)]
	copy(v, s.vecs)
	s.vecs = v
	s.mem.Release()
	s.mem.B = b
}

// Reserve makes room for n more records of dimension dim, so that the next n
// records are added without copying the vectors.
func (s *Store) Reserve(n, dim int) error {
	if dim <= 0 || n < 0 {
		return fmt.Errorf("cannot reserve %d records of dimension %d", n, dim)
	}
	if s.dim != 0 && dim != s.dim {
		return fmt.Errorf("cannot reserve records of dimension %d, the store has %d", dim, s.dim)
	}
	s.dim = dim
	s.grow(n * dim)
	s.ids = slices.Grow(s.ids, n)
	s.locale = slices.Grow(s.locale, n)
	return nil
}

// code is the locale code of locale, assigned on first use.
func (s *Store) code(locale string) (uint16, error) {
	code, ok := s.codes[locale]
	if !ok {
		n := len(s.codes) + 1 // 0 is no locale
		if n > math.MaxUint16 {
			return 0, fmt.Errorf("too many distinct locales")
		}
		code = uint16(n)
		s.codes[locale] = code
	}
	return code, nil
}

// AddFilled appends recs, whose vectors fill writes straight into the store's
// rows (see store.Filler); nothing is added when fill fails.
func (s *Store) AddFilled(_ context.Context, recs []store.Record, fill func(dst []float32) error) error {
	if s.dim == 0 {
		return fmt.Errorf("the store's dimension is not known (Reserve first)")
	}
	codes := make([]uint16, len(recs))
	for i, r := range recs {
		c, err := s.code(r.Locale)
		if err != nil {
			return err
		}
		codes[i] = c
	}
	start := len(s.vecs)
	s.grow(len(recs) * s.dim)
	dst := s.vecs[start : start+len(recs)*s.dim]
	clear(dst)
	if err := fill(dst); err != nil {
		return err
	}
	s.vecs = s.vecs[:start+len(recs)*s.dim]
	for i, r := range recs {
		normalize(dst[i*s.dim : (i+1)*s.dim])
		s.ids = append(s.ids, r.ID)
		s.locale = append(s.locale, codes[i])
	}
	runtime.KeepAlive(s) // dst is s's mapping (see searchBlock)
	return nil
}

func (s *Store) Name() string { return "memory" }

// Len is the number of records.
func (s *Store) Len() int { return len(s.ids) }

// Add appends records; every vector must have the dimension of the first.
func (s *Store) Add(_ context.Context, recs []store.Record) error {
	for _, r := range recs {
		if s.dim == 0 {
			if len(r.Vector) == 0 {
				return fmt.Errorf("record %q has an empty vector", r.ID)
			}
			s.dim = len(r.Vector)
		}
		if len(r.Vector) != s.dim {
			return fmt.Errorf("record %q has dimension %d, the store has %d", r.ID, len(r.Vector), s.dim)
		}
		code, err := s.code(r.Locale)
		if err != nil {
			return err
		}
		s.grow(s.dim)
		start := len(s.vecs)
		s.vecs = s.vecs[:start+s.dim]
		copy(s.vecs[start:], r.Vector)
		normalize(s.vecs[start:])
		s.ids = append(s.ids, r.ID)
		s.locale = append(s.locale, code)
	}
	return nil
}

// exportPage is the number of records Export hands over at a time.
const exportPage = 4096

// Export hands back every record with its stored vector (unit-normalised by
// Add), in the order they were added, exportPage at a time (store.Exporter).
// The vectors are the store's own rows: page must copy what it keeps.
func (s *Store) Export(ctx context.Context, dim int, page func(recs []store.Record) error) (store.ExportCost, error) {
	var cost store.ExportCost
	if len(s.ids) > 0 && dim != s.dim {
		return cost, fmt.Errorf("export of dimension %d, the store has %d", dim, s.dim)
	}
	names := make([]string, len(s.codes)+1)
	for l, c := range s.codes {
		names[c] = l
	}
	recs := make([]store.Record, 0, exportPage)
	for start := 0; start < len(s.ids); start += exportPage {
		if err := ctx.Err(); err != nil {
			return cost, err
		}
		recs = recs[:0]
		for i := start; i < min(start+exportPage, len(s.ids)); i++ {
			recs = append(recs, store.Record{ID: s.ids[i], Locale: names[s.locale[i]], Vector: s.vecs[i*s.dim : (i+1)*s.dim]})
		}
		if err := page(recs); err != nil {
			return cost, err
		}
		cost.Records += len(recs)
	}
	runtime.KeepAlive(s) // the rows may be s's mapping
	return cost, nil
}

// Similarity is the cosine similarity of the query vector q with the stored
// record id, as Search scores it: false when the store has no such record, q
// is zero, or locale is not "" and the record is of another locale (a search
// filtered to locale could not return it). The first call indexes the ids.
func (s *Store) Similarity(q []float32, id, locale string) (float64, bool) {
	if s.byID == nil {
		s.byID = make(map[string]int32, len(s.ids))
		for i, x := range s.ids {
			s.byID[x] = int32(i) // a store holds fewer than 2^31 records (Search's heaps index them as int32)
		}
	}
	i, ok := s.byID[id]
	if !ok || len(q) != s.dim {
		return 0, false
	}
	if c, known := s.codes[locale]; locale != "" && (!known || c != s.locale[i]) {
		return 0, false
	}
	row := make([]float32, s.dim)
	copy(row, q)
	if !normalize(row) {
		return 0, false
	}
	v := s.vecs[int(i)*s.dim : (int(i)+1)*s.dim]
	d, _, _, _ := dot4(v, row, row, row, row)
	runtime.KeepAlive(s)
	return float64(d), true
}

// Close releases the vectors; the store is then empty.
func (s *Store) Close(context.Context) error {
	s.vecs, s.ids, s.locale, s.byID, s.ranks = nil, nil, nil, nil, nil
	s.mem.Release()
	return nil
}

// Search scores every record (of the query's locale) exactly. A zero query
// vector matches nothing.
func (s *Store) Search(ctx context.Context, qs []store.Query, k int) ([][]store.Hit, error) {
	out := make([][]store.Hit, len(qs))
	if k <= 0 || len(s.ids) == 0 || len(qs) == 0 {
		return out, nil
	}
	// Normalised copies of the queries, contiguous; filter code per query
	// (0 = all locales, -1 = a locale with no records).
	qv := make([]float32, len(qs)*s.dim)
	filter := make([]int32, len(qs))
	live := make([]bool, len(qs))
	for i, q := range qs {
		if len(q.Vector) != s.dim {
			return nil, fmt.Errorf("query %d has dimension %d, the store has %d", i, len(q.Vector), s.dim)
		}
		row := qv[i*s.dim : (i+1)*s.dim]
		copy(row, q.Vector)
		live[i] = normalize(row)
		if q.Locale != "" {
			if c, ok := s.codes[q.Locale]; ok {
				filter[i] = int32(c)
			} else {
				filter[i] = -1
			}
		}
	}
	// Queries sorted by locale filter, so that a block mostly shares one filter
	// and records of other locales are skipped without scoring.
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return filter[order[a]] < filter[order[b]] })
	ranks := s.tieRanks()
	nBlocks := (len(qs) + queryBlock - 1) / queryBlock
	var next atomic.Int64
	var wg sync.WaitGroup
	var ctxErr atomic.Value
	for w := 0; w < min(s.workers, nBlocks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			heaps := make([]topk.Heap, queryBlock)
			for {
				b := int(next.Add(1) - 1)
				if b >= nBlocks {
					return
				}
				if err := ctx.Err(); err != nil {
					ctxErr.Store(err)
					return
				}
				block := order[b*queryBlock : min((b+1)*queryBlock, len(qs))]
				s.searchBlock(qv, filter, live, block, k, ranks, heaps, out)
			}
		}()
	}
	wg.Wait()
	if err, ok := ctxErr.Load().(error); ok {
		return nil, err
	}
	return out, nil
}

// searchBlock scores the queries of block against every record in one pass over
// the vectors, and fills their entries of out.
func (s *Store) searchBlock(qv []float32, filter []int32, live []bool, block []int, k int, ranks []int32, heaps []topk.Heap, out [][]store.Hit) {
	dim := s.dim
	for j := range block {
		heaps[j].Reset(k, ranks)
	}
	// Positions (in block) of the queries that can match anything, by 4; -1 pads.
	active := make([]int, 0, len(block)+3)
	for j, q := range block {
		if live[q] && filter[q] >= 0 {
			active = append(active, j)
		}
	}
	if len(active) > 0 {
		for len(active)%4 != 0 {
			active = append(active, -1)
		}
		rows := make([][]float32, len(active))
		want := make([]int32, len(active)) // filter per active slot; -1 for padding
		for g, j := range active {
			if j < 0 {
				rows[g] = rows[0]
				want[g] = -1
				continue
			}
			q := block[j]
			rows[g] = qv[q*dim : (q+1)*dim]
			want[g] = filter[q]
		}
		for i := range s.ids {
			v := s.vecs[i*dim : (i+1)*dim]
			code := int32(s.locale[i])
			for g := 0; g < len(active); g += 4 {
				m0 := want[g] == 0 || want[g] == code
				m1 := want[g+1] == 0 || want[g+1] == code
				m2 := want[g+2] == 0 || want[g+2] == code
				m3 := want[g+3] == 0 || want[g+3] == code
				if !m0 && !m1 && !m2 && !m3 {
					continue
				}
				s0, s1, s2, s3 := dot4(v, rows[g], rows[g+1], rows[g+2], rows[g+3])
				if m0 {
					heaps[active[g]].Push(float64(s0), int32(i))
				}
				if m1 {
					heaps[active[g+1]].Push(float64(s1), int32(i))
				}
				if m2 {
					heaps[active[g+2]].Push(float64(s2), int32(i))
				}
				if m3 {
					heaps[active[g+3]].Push(float64(s3), int32(i))
				}
			}
		}
	}
	for j, q := range block {
		out[q] = hits(&heaps[j], s.ids)
	}
	// The rows may be a mapping that s's cleanup releases: s stays reachable
	// until the last row has been read.
	runtime.KeepAlive(s)
}

// normalize scales v to unit length in place; it reports false for a zero vector.
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// hits returns the kept entries of h, best first, and empties it.
func hits(h *topk.Heap, ids []string) []store.Hit {
	items := h.Items(nil)
	out := make([]store.Hit, len(items))
	for r, it := range items {
		out[r] = store.Hit{ID: ids[it.Index], Score: it.Score}
	}
	return out
}

// tieRanks is each record's place in id order, the tie-breaker of Search (ties
// never depend on the order the records were added in): computed once after
// the records change.
func (s *Store) tieRanks() []int32 {
	s.rankMu.Lock()
	defer s.rankMu.Unlock()
	if len(s.ranks) != len(s.ids) {
		s.ranks = topk.Ranks(s.ids)
	}
	return s.ranks
}

func init() {
	store.Register(store.Kind{Name: "memory", Description: "in-process exact search",
		Open: func(context.Context, store.Config) (*store.Opened, error) {
			return &store.Opened{Store: New(0)}, nil
		}})
}
