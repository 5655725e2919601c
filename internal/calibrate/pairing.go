package calibrate

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// Pairing is a sort-merge on case ids. Each side's labels of a dimension become
// pairKeys (no pointers: sorting them moves no pointer and the collector never
// scans them), sorted by case id on their own core, and the two sorted sides are
// walked together, so that paired cases, unpaired ones, disagreements and
// violations all come out in case-id order without a map, a string comparison
// that reaches into the heap (but for ids that tie on 16 bytes past their common
// prefix) or an allocation per label.

// pairKey is one label of one side of one dimension: the 16 bytes of its case id
// that follow the prefix every id of the dimension shares (zero-padded, big-endian
// so that comparing the words compares the bytes), the length of that rest (17:
// longer than the key), its bin and its index in the side's labels (24 bytes;
// the construct and timestamp are read from the labels where needed).
type pairKey struct {
	hi, lo uint64
	i      int32
	bin    uint16
	n      uint8
}

// side is one side's labels, by lock dimension.
type side struct {
	ls *labelfile.Labels
	// A side whose case ids already increase within each dimension (a file
	// written in case-id order) is walked as it is: order holds each
	// dimension's label indices (none per label for a file grouped by
	// dimension or with the dimensions of a case side by side, else 4
	// bytes a label), and keys stays nil.
	// Otherwise keys holds each dimension's keys, sorted by case id, the
	// last of equal ids kept.
	keys       [][]pairKey
	order      []labelOrder
	constructs []string // construct names by code
	codes      map[string]int
	count      []int    // labels per dimension
	first      []string // first case id per dimension
	lcp        []int    // length of the prefix every case id of the dimension shares
}

// pairing holds both sides and each dimension's common prefix length.
type pairing struct {
	human, judge *side
	off          []int
	// positional: in every dimension both sides list the same case ids in
	// the same order, strictly increasing in case-id order or in shortlex
	// order (shorter first, then bytewise: c9 < c10): the k-th labels of
	// the two sides pair, with no comparison. In shortlex order (sorted
	// false), what comes out of the walk is put in case-id order after it
	// (sortByCase).
	positional, sorted bool
}

// pair builds both sides' sorted keys for the lock dimensions names (dimIndex
// numbers them): a pass over each side for counts and common prefixes, then a
// pass for the keys and their sorts, each side on its own goroutine.
func pair(ctx context.Context, human, judge *labelfile.Labels, dimIndex map[string]int) (*pairing, error) {
	nd := len(dimIndex)
	p := &pairing{human: &side{ls: human}, judge: &side{ls: judge}, off: make([]int, nd)}
	sides := [2]*side{p.human, p.judge}
	if err := parallel(ctx, 2, func(s int) error { sides[s].scan(dimIndex); return nil }); err != nil {
		return nil, err
	}
	for x := range nd {
		h, j := p.human, p.judge
		switch {
		case h.count[x] == 0:
			p.off[x] = j.lcp[x]
		case j.count[x] == 0:
			p.off[x] = h.lcp[x]
		default:
			p.off[x] = min(h.lcp[x], j.lcp[x], commonPrefix(h.first[x], j.first[x]))
		}
	}
	// Files written from one list of cases, numbered with padding or
	// without: pair by position, with no comparison of ids and no sort.
	if err := parallel(ctx, 2, func(s int) error { return sides[s].buildOrder(ctx, dimIndex) }); err != nil {
		return nil, err
	}
	p.sorted = human.Increasing() && judge.Increasing()
	if p.positional = positional(p.human, p.judge, p.sorted); p.positional || p.sorted {
		return p, nil // positional, or merged as they are
	}
	p.human.order, p.judge.order = nil, nil
	p.human.constructs, p.human.codes, p.judge.constructs, p.judge.codes = nil, nil, nil, nil
	if err := parallel(ctx, 2, func(s int) error { return sides[s].build(ctx, dimIndex, p.off) }); err != nil {
		return nil, err
	}
	return p, nil
}

// buildOrder lists each dimension's label indices in file order (s.order),
// numbering the side's constructs in label order as build does.
func (s *side) buildOrder(ctx context.Context, dimIndex map[string]int) error {
	if s.ls.Len() > math.MaxInt32 {
		return fmt.Errorf("%d labels on one side: at most %d can be paired", s.ls.Len(), math.MaxInt32)
	}
	s.order = make([]labelOrder, len(dimIndex))
	var dims dimCache
	var codes constructCodes
	for i := range s.ls.Len() {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		x := dims.index(s.ls.Dimension(i), dimIndex)
		if x < 0 {
			continue
		}
		codes.of(s, i)
		s.order[x].add(int32(i), s.count[x])
	}
	return nil
}

// labelOrder is one dimension's label indices in the order they are walked:
// an arithmetic progression (start + k·stride: a file grouped by dimension,
// or with the dimensions of each case side by side) takes no memory per
// label; any other order is a slice of them.
type labelOrder struct {
	idx           []int32 // nil: the progression
	start, stride int32
	n             int
}

// add appends label i; count is the dimension's number of labels (the
// slice's capacity if one is needed).
func (o *labelOrder) add(i int32, count int) {
	switch {
	case o.idx != nil:
		o.idx = append(o.idx, i)
	case o.n == 0:
		o.start = i
	case o.n == 1:
		o.stride = i - o.start
	case i != o.start+int32(o.n)*o.stride: //nolint:gosec // G115: o.n < count, at most MaxInt32
		o.idx = make([]int32, o.n, max(count, o.n+1))
		for k := range o.idx {
			o.idx[k] = o.start + int32(k)*o.stride
		}
		o.idx = append(o.idx, i)
	}
	o.n++
}

func (o *labelOrder) len() int { return o.n }

// at is the k-th index.
func (o *labelOrder) at(k int) int32 {
	if o.idx != nil {
		return o.idx[k]
	}
	return o.start + int32(k)*o.stride //nolint:gosec // G115: k < o.n
}

// positional reports whether h and j pair by position (pairing.positional):
// in every dimension the same number of labels and the same case id at each
// position, the ids strictly increasing in case-id order (sorted: both sides
// are Increasing) or in shortlex order, so that each side's ids are distinct
// and the merge would pair exactly these.
func positional(h, j *side, sorted bool) bool {
	for x := range h.order {
		ho, jo := &h.order[x], &j.order[x]
		if ho.len() != jo.len() {
			return false
		}
		prev := ""
		for k := range ho.len() {
			id := h.ls.CaseID(int(ho.at(k)))
			if id != j.ls.CaseID(int(jo.at(k))) {
				return false
			}
			if !sorted && k > 0 && (len(prev) > len(id) || len(prev) == len(id) && prev >= id) {
				return false
			}
			prev = id
		}
	}
	return true
}

// sortByCase puts xs, whose case ids (of id) come in shortlex order, in
// case-id order (bytewise, as the merge of sorted sides gives them): a
// stable merge of its ascending runs (one per id length when the ids are
// numbers without padding), or a stable sort when there are more than 64.
func sortByCase[T any](xs []T, id func(*T) string) {
	runs := []int{0}
	for i := 1; i < len(xs); i++ {
		if id(&xs[i-1]) > id(&xs[i]) {
			runs = append(runs, i)
		}
	}
	if len(runs) == 1 {
		return
	}
	if len(runs) > 64 {
		slices.SortStableFunc(xs, func(a, b T) int { return strings.Compare(id(&a), id(&b)) })
		return
	}
	runs = append(runs, len(xs))
	buf := make([]T, len(xs))
	src, dst := xs, buf
	for len(runs) > 2 {
		next := runs[:1]
		for r := 0; r+1 < len(runs); r += 2 {
			lo, mid := runs[r], runs[r+1]
			hi := mid
			if r+2 < len(runs) {
				hi = runs[r+2]
			}
			a, b, o := lo, mid, lo
			for a < mid && b < hi {
				if id(&src[b]) < id(&src[a]) {
					dst[o], b = src[b], b+1
				} else {
					dst[o], a = src[a], a+1
				}
				o++
			}
			o += copy(dst[o:], src[a:mid])
			copy(dst[o:], src[b:hi])
			next = append(next, hi)
		}
		runs = next
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
}

// scan counts the labels of each dimension and the prefix their case ids share.
func (s *side) scan(dimIndex map[string]int) {
	nd := len(dimIndex)
	s.count, s.first, s.lcp = make([]int, nd), make([]string, nd), make([]int, nd)
	var dims dimCache
	for i := range s.ls.Len() {
		x := dims.index(s.ls.Dimension(i), dimIndex)
		if x < 0 {
			continue
		}
		id := s.ls.CaseID(i)
		if s.count[x] == 0 {
			s.first[x], s.lcp[x] = id, len(id)
		} else if s.lcp[x] > 0 {
			s.lcp[x] = commonPrefix(s.first[x][:s.lcp[x]], id)
		}
		s.count[x]++
	}
}

// build makes and sorts the keys of each dimension.
func (s *side) build(ctx context.Context, dimIndex map[string]int, off []int) error {
	if s.ls.Len() > math.MaxInt32 {
		return fmt.Errorf("%d labels on one side: at most %d can be paired", s.ls.Len(), math.MaxInt32)
	}
	if s.ls.Increasing() {
		return s.buildOrder(ctx, dimIndex)
	}
	s.keys = make([][]pairKey, len(dimIndex))
	for x, c := range s.count {
		s.keys[x] = make([]pairKey, 0, c)
	}
	var dims dimCache
	var codes constructCodes
	for i := range s.ls.Len() {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		x := dims.index(s.ls.Dimension(i), dimIndex)
		if x < 0 {
			continue
		}
		codes.of(s, i) // numbers the side's constructs in label order
		k := pairKey{i: int32(i), bin: s.bin(i)}
		k.hi, k.lo, k.n = idKey(s.ls.CaseID(i)[off[x]:])
		s.keys[x] = append(s.keys[x], k)
	}
	for x := range s.keys {
		keys, err := s.sortKeys(ctx, s.keys[x], off[x])
		if err != nil {
			return err
		}
		s.keys[x] = keys
	}
	return nil
}

// sortKeys sorts keys by case id (bytewise, as sort.Strings), then index, and keeps
// the last of equal ids. Keys come in index order; they are sorted as they are
// when already in order, else by a stable least-significant-digit radix sort on
// the 16 key bytes (a pass per byte that varies: ids "case-0000001"… vary in 7),
// and runs that tie on the key bytes (duplicates, ids longer than the key) by
// comparison. A cancelled ctx ends the sort within moments.
func (s *side) sortKeys(ctx context.Context, keys []pairKey, off int) ([]pairKey, error) {
	full := func(a, b pairKey) int {
		if c := cmpKeys(a, b, s.ls, s.ls, off); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	}
	if !slices.IsSortedFunc(keys, full) {
		var err error
		if keys, err = radixSort(ctx, keys); err != nil {
			return nil, err
		}
		for a := 0; a < len(keys); {
			b := a + 1
			for b < len(keys) && keys[b].hi == keys[a].hi && keys[b].lo == keys[a].lo {
				b++
			}
			if b-a > 1 {
				slices.SortFunc(keys[a:b], full)
			}
			a = b
		}
	}
	out := keys[:0]
	for x, k := range keys {
		if x+1 < len(keys) && cmpKeys(k, keys[x+1], s.ls, s.ls, off) == 0 {
			continue
		}
		out = append(out, k)
	}
	return out, nil
}

// bin is label i's bin as a key holds it: 0xffff, out of every lock's range,
// for a bin that does not fit.
func (s *side) bin(i int) uint16 {
	if b := s.ls.Bin(i); b >= 0 && b < 0xffff {
		return uint16(b)
	}
	return 0xffff
}

// dimLabels is one dimension of one side in case-id order: its keys, or its
// label indices with the side's labels.
type dimLabels struct {
	s          *side
	keys       []pairKey
	order      *labelOrder
	positional bool // pairing.positional
}

// dim is dimension x of s.
func (s *side) dim(x int) dimLabels {
	if s.keys != nil {
		return dimLabels{s: s, keys: s.keys[x]}
	}
	return dimLabels{s: s, order: &s.order[x]}
}

func (d dimLabels) len() int {
	if d.keys != nil {
		return len(d.keys)
	}
	return d.order.len()
}

// at is the k-th label in case-id order as a key (index and bin; the id
// bytes only when keyed).
func (d dimLabels) at(k int) pairKey {
	if d.keys != nil {
		return d.keys[k]
	}
	i := d.order.at(k)
	return pairKey{i: i, bin: d.s.bin(int(i))}
}

// compareAt compares the case ids of a's x-th and b's y-th labels, which
// share their first off bytes: by the keys when both sides have them.
func compareAt(a, b dimLabels, x, y, off int) int {
	if a.positional {
		return 0 // x == y: the same id (pairing.positional)
	}
	if a.keys != nil && b.keys != nil {
		return cmpKeys(a.keys[x], b.keys[y], a.s.ls, b.s.ls, off)
	}
	return strings.Compare(a.s.ls.CaseID(int(a.at(x).i)), b.s.ls.CaseID(int(b.at(y).i)))
}

// keyByte is byte d of a key's 16 bytes, counted from the least significant.
func keyByte(k *pairKey, d int) byte {
	if d < 8 {
		return byte(k.lo >> (8 * d)) //nolint:gosec // the truncation is the point: one byte of the key
	}
	return byte(k.hi >> (8 * (d - 8))) //nolint:gosec // the truncation is the point: one byte of the key
}

// radixSort sorts keys by (hi, lo), stably, one counting pass per byte that is
// not the same in every key. It may return the scratch slice it allocates.
func radixSort(ctx context.Context, keys []pairKey) ([]pairKey, error) {
	var counts [16][256]int
	for x := range keys {
		k := &keys[x]
		for d := range 16 {
			counts[d][keyByte(k, d)]++
		}
	}
	var buf []pairKey
	for d := range 16 {
		c := &counts[d]
		if c[keyByte(&keys[0], d)] == len(keys) {
			continue // every key has this byte
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if buf == nil {
			buf = make([]pairKey, len(keys))
		}
		var pos [256]int
		sum := 0
		for v := range 256 {
			pos[v], sum = sum, sum+c[v]
		}
		for x := range keys {
			v := keyByte(&keys[x], d)
			buf[pos[v]] = keys[x]
			pos[v]++
		}
		keys, buf = buf, keys
	}
	return keys, nil
}

// cmpKeys compares the case ids of a (a label of as) and b (of bs) that share
// their first off bytes: by the keys, and by the ids themselves when both are
// longer than the key and tie on it.
func cmpKeys(a, b pairKey, as, bs *labelfile.Labels, off int) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	if a.lo != b.lo {
		return cmp.Compare(a.lo, b.lo)
	}
	if a.n <= 16 || b.n <= 16 {
		// The shorter is a prefix of the other (the key's padding is zeros).
		return cmp.Compare(a.n, b.n)
	}
	return strings.Compare(as.CaseID(int(a.i))[off:], bs.CaseID(int(b.i))[off:])
}

// idKey is the key of the rest of a case id: its first 16 bytes as two big-endian
// words (zero-padded) and its length, 17 when longer.
func idKey(rest string) (hi, lo uint64, n uint8) {
	var b [16]byte
	copy(b[:], rest)
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), uint8(min(len(rest), 17))
}

// constructCodes numbers a side's constructs (side.constructs) in the order
// first met, remembering the last one (labels usually share one).
type constructCodes struct {
	last string
	code int
	set  bool
}

// of is the code of label i's construct, added to s.constructs when new.
func (c *constructCodes) of(s *side, i int) int {
	name := s.ls.Construct(i)
	if c.set && name == c.last {
		return c.code
	}
	code, ok := s.codes[name]
	if !ok {
		// Only build adds (each side's on its own goroutine); evaluation
		// finds every construct of the lock's dimensions here already.
		if s.codes == nil {
			s.codes = map[string]int{}
		}
		code = len(s.constructs)
		s.codes[name] = code
		s.constructs = append(s.constructs, name)
	}
	c.last, c.code, c.set = name, code, true
	return code
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// dimCache looks a label's dimension up in dimIndex, remembering the last one
// (labels usually come grouped by dimension): -1 for a dimension not in the lock.
type dimCache struct {
	last string
	x    int
	set  bool
}

func (c *dimCache) index(dim string, dimIndex map[string]int) int {
	if !c.set || dim != c.last {
		x, ok := dimIndex[dim]
		if !ok {
			x = -1
		}
		c.last, c.x, c.set = dim, x, true
	}
	return c.x
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines and returns the first
// error (ctx.Err() once ctx ends); every fn has returned when it returns.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					return
				}
				errs[i] = fn(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
