package gate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/stretchr/testify/require"
)

// mapIDs runs cases of ids (at lines) through a's log as check does: workers
// score batches of them at once, each writing its cases' id records
// (IDWriter), and Add takes the results in file order. A result of every
// noRecEvery-th case has no record (Add writes it: a result scored for
// another accumulator, or without Scorer.IDs).
func mapIDs(t testing.TB, a *Accumulator, ids []string, lines []int, workers, maxBatch, noRecEvery int, rng *rand.Rand) {
	t.Helper()
	var bounds []int // batch starts
	for i := 0; i < len(ids); i += 1 + rng.IntN(maxBatch) {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(ids))
	type batch struct {
		seq int
		rs  []CaseResult
	}
	todo := make(chan int, len(bounds))
	done := make(chan batch, len(bounds))
	tokens := make(chan struct{}, 2*workers+2) // batches in flight, as casefile.MapCasesWith
	w := a.IDWriter()
	for range workers {
		go func() {
			sc := new(scratch)
			for b := range todo {
				rs := make([]CaseResult, bounds[b+1]-bounds[b])
				for j := range rs {
					i := bounds[b] + j
					r := &rs[j]
					*r = CaseResult{File: "f", Line: lines[i], ID: ids[i], idHash: idHash(ids[i]), hashed: true}
					if noRecEvery == 0 || i%noRecEvery != noRecEvery-1 {
						w.record(sc, r, ids[i], lines[i])
					}
				}
				done <- batch{b, rs}
			}
		}()
	}
	go func() {
		for b := range len(bounds) - 1 {
			tokens <- struct{}{}
			todo <- b
		}
		close(todo)
	}()
	waiting := map[int][]CaseResult{}
	for next := 0; next < len(bounds)-1; {
		if rs, ok := waiting[next]; ok {
			delete(waiting, next)
			for j := range rs {
				require.NoError(t, a.Add(&rs[j]))
			}
			next++
			<-tokens
			continue
		}
		b := <-done
		waiting[b.seq] = b.rs
	}
}

// firstDuplicate is the error Duplicate must give for ids at lines, by a map.
func firstDuplicate(ids []string, lines []int) string {
	first := map[string]int{}
	for i, id := range ids {
		if f, ok := first[id]; ok {
			return fmt.Sprintf("f:%d: duplicate case id %q (first at line %d)", lines[i], id, f)
		}
		first[id] = lines[i]
	}
	return ""
}

// The id records written by the workers name the earliest duplicate as the
// records Add writes did, whichever worker wrote a case's record, whether
// the record was kept in memory or spilled, its page reused or not, and
// with results without a record among them; past the memory bound the
// pages are reused once their records are in the file, so the store's
// memory does not grow with the cases.
func TestIDWriterRecords(t *testing.T) {
	racetest.Skip(t, "10⁵ cases through the log a few times")
	t.Setenv("TMPDIR", t.TempDir())
	rng := metrics.NewRand(5)
	long := strings.Repeat("L", idPageSize+10)
	for trial := range 12 {
		n := 20000 + rng.IntN(100000)
		ids, lines := make([]string, n), make([]int, n)
		space := n * (1 + rng.IntN(50))
		if trial%3 == 0 {
			space = 1 << 40
		}
		line := 0
		for i := range ids {
			ids[i] = fmt.Sprintf("case-%d", rng.IntN(space))
			if i%9000 == 4000 {
				ids[i] += long // a page of its own
			}
			line += 1 + rng.IntN(3)
			lines[i] = line
		}
		if trial%4 == 1 { // the duplicate late, its first early
			j := n - 1 - rng.IntN(100)
			ids[j] = ids[rng.IntN(100)]
		}
		a := NewAccumulator()
		if trial%2 == 1 {
			a.seen.maxIDBytes = 4096 // spill almost everything
			a.seen.chunkN, a.seen.maxMemChunks = 64, 8
		}
		workers := 1 + trial%4
		mapIDs(t, a, ids, lines, workers, 1+rng.IntN(400), []int{0, 7, 1000}[trial%3], rng)
		want := firstDuplicate(ids, lines)
		if want == "" {
			require.NoError(t, a.Duplicate(), "trial %d", trial)
		} else {
			require.EqualError(t, a.Duplicate(), want, "trial %d", trial)
		}
		if a.seen.maxIDBytes != 0 {
			// Without reuse, ~1 MiB or more of records would take 16 or
			// more pages.
			require.Greater(t, a.seen.ids.spill.off, int64(n*8), "trial %d: the records were spilled", trial)
			require.LessOrEqual(t, a.seen.pages, 4*workers+4, "trial %d: pages are reused", trial)
		}
	}
}
