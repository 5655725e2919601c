// Package topk selects the k best of a stream of scored items in the order
// retrieve's output uses: by score rounded to Digits significant digits, best
// first, then by tie rank (an item's place in chunk-id order), lowest first.
// An item that would come before another in that order is never dropped in
// favour of it, so which items tie at the cut never depends on the order
// they were pushed in.
//
// The heap itself compares raw scores (then tie ranks), which costs one
// comparison per item that cannot make the top k. Items that leave it with a
// score close enough to the worst kept one to round to the same value are
// remembered beside it (the near list); at the end, the kept items whose
// score rounds as the worst kept one's and those remembered that round the
// same compete by tie rank alone.
package topk

import (
	"math"
	"slices"
	"strconv"
)

// Digits is the number of significant digits scores are rounded to.
const Digits = 6

// Round rounds s to Digits significant digits, as strconv's 'g' format prints
// it; ±Inf and NaN are kept as they are.
func Round(s float64) float64 {
	var buf [32]byte
	r, err := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], s, 'g', Digits, 64)), 64)
	if err != nil {
		return s
	}
	return r
}

// spread bounds how far apart, relative to either, two scores that round to
// the same value can be: one unit of the Digits-th digit is at most 10^-5 of
// the score, doubled for the arithmetic.
const spread = 2e-5

// below is a score under which no score rounds as s does.
func below(s float64) float64 {
	switch {
	case s != s:
		return math.Inf(-1)
	case math.IsInf(s, 0):
		return s
	}
	return s - spread*math.Abs(s)
}

// above is a score over which no score rounds as s does.
func above(s float64) float64 {
	switch {
	case s != s:
		return math.Inf(1)
	case math.IsInf(s, 0):
		return s
	}
	return s + spread*math.Abs(s)
}

// worse reports whether (sa, ra) ranks below (sb, rb) in the heap's order: by
// raw score, then by tie rank; NaN ranks below every number.
func worse(sa float64, ra int32, sb float64, rb int32) bool {
	if na, nb := sa != sa, sb != sb; na || nb {
		if na != nb {
			return na
		}
		return ra > rb
	}
	if sa != sb {
		return sa < sb
	}
	return ra > rb
}

// Item is a kept item: its index (as pushed) and score.
type Item struct {
	Index int32
	Score float64
}

type entry struct {
	score       float64
	index, rank int32
}

// Heap keeps the k best items pushed. The zero Heap keeps nothing; Reset
// readies it (and reuses its memory).
type Heap struct {
	k     int
	ranks []int32 // tie rank by index; nil: the index itself
	// floor is the score under which Push drops an item at once: -Inf until k
	// items are kept, then below(the worst kept score).
	floor   float64
	kept    []entry // a min-heap: kept[0] is the worst kept
	near    []entry // items that left with a score of at least floor then
	pruneAt int
}

// Reset empties h for a selection of k items whose tie rank is ranks[index]
// (nil: the index).
func (h *Heap) Reset(k int, ranks []int32) {
	h.k, h.ranks = k, ranks
	h.floor = math.Inf(-1)
	if k <= 0 {
		h.floor = math.Inf(1)
	}
	h.kept, h.near = h.kept[:0], h.near[:0]
	h.pruneAt = max(64, 2*k)
}

// Push offers item index with score s. An item whose score is below the
// floor costs one comparison (Push is inlined).
func (h *Heap) Push(s float64, index int32) {
	if s < h.floor {
		return
	}
	h.push(s, index)
}

func (h *Heap) push(s float64, index int32) {
	if h.k <= 0 {
		return
	}
	r := index
	if h.ranks != nil {
		r = h.ranks[index]
	}
	e := entry{score: s, index: index, rank: r}
	if len(h.kept) < h.k {
		h.kept = append(h.kept, e)
		h.up(len(h.kept) - 1)
		if len(h.kept) == h.k {
			h.floor = below(h.kept[0].score)
		}
		return
	}
	root := h.kept[0]
	if !worse(root.score, root.rank, s, r) {
		h.keepNear(e)
		return
	}
	h.kept[0] = e
	h.down(0)
	h.floor = below(h.kept[0].score)
	h.keepNear(root)
}

// keepNear remembers e if its score may round as the worst kept one does.
func (h *Heap) keepNear(e entry) {
	if !(e.score >= h.floor) {
		return
	}
	if len(h.near) >= h.pruneAt {
		// The floor has risen since some were kept.
		h.near = slices.DeleteFunc(h.near, func(x entry) bool { return !(x.score >= h.floor) })
		h.pruneAt = max(h.pruneAt, 2*len(h.near))
	}
	h.near = append(h.near, e)
}

func (h *Heap) up(j int) {
	for j > 0 {
		p := (j - 1) / 2
		if !worse(h.kept[j].score, h.kept[j].rank, h.kept[p].score, h.kept[p].rank) {
			return
		}
		h.kept[j], h.kept[p] = h.kept[p], h.kept[j]
		j = p
	}
}

func (h *Heap) down(j int) {
	n := len(h.kept)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h.kept[r].score, h.kept[r].rank, h.kept[l].score, h.kept[l].rank) {
			m = r
		}
		if !worse(h.kept[m].score, h.kept[m].rank, h.kept[j].score, h.kept[j].rank) {
			return
		}
		h.kept[j], h.kept[m] = h.kept[m], h.kept[j]
		j = m
	}
}

// settle makes the kept items the k first in the rounded order: the kept ones
// whose score rounds as the worst kept one's and the near ones that round the
// same compete by tie rank (every item that rounds higher is kept: its score
// is above the worst kept one's). The heap order is lost.
func (h *Heap) settle() {
	if len(h.kept) < h.k || len(h.near) == 0 {
		return // nothing that could tie was left out
	}
	root := h.kept[0].score
	if root != root {
		return // the worst kept is NaN: nothing left out ranks above it
	}
	rr := Round(root)
	lo, hi := below(root), above(root)
	last, lastSame := root, true
	same := func(s float64) bool {
		if s != last {
			last, lastSame = s, Round(s) == rr
		}
		return lastSame
	}
	var slots []int
	var group []entry
	for j, e := range h.kept {
		if e.score <= hi && same(e.score) {
			slots = append(slots, j)
			group = append(group, e)
		}
	}
	n := len(group)
	for _, e := range h.near {
		if e.score >= lo && e.score <= hi && same(e.score) {
			group = append(group, e)
		}
	}
	if len(group) == n {
		return
	}
	slices.SortFunc(group, func(a, b entry) int {
		if a.rank != b.rank {
			return int(a.rank) - int(b.rank)
		}
		return int(a.index) - int(b.index)
	})
	for t, j := range slots {
		h.kept[j] = group[t]
	}
}

// Items appends the kept items to dst, best first (by score, then tie rank),
// and empties h. They are the k first items in the order of rounded score,
// then tie rank (all the items when fewer were pushed).
func (h *Heap) Items(dst []Item) []Item {
	h.settle()
	slices.SortFunc(h.kept, func(a, b entry) int {
		switch {
		case worse(b.score, b.rank, a.score, a.rank):
			return -1
		case worse(a.score, a.rank, b.score, b.rank):
			return 1
		}
		return 0
	})
	for _, e := range h.kept {
		dst = append(dst, Item{Index: e.index, Score: e.score})
	}
	h.Reset(h.k, h.ranks)
	return dst
}

// Ranks returns each id's place in the sorted order of ids (equal ids by
// index): the tie ranks of items indexed as ids are.
func Ranks(ids []string) []int32 {
	order := make([]int32, len(ids))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if ids[a] != ids[b] {
			if ids[a] < ids[b] {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	ranks := make([]int32, len(ids))
	for r, i := range order {
		ranks[i] = int32(r)
	}
	return ranks
}
