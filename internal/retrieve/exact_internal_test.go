package retrieve

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// degraded is a store whose answers are mangled as a broken index's would be.
type degraded struct {
	*memory.Store
	mangle func(i int, q store.Query, hits []store.Hit) []store.Hit
}

func (d *degraded) Search(ctx context.Context, qs []store.Query, k int) ([][]store.Hit, error) {
	out, err := d.Store.Search(ctx, qs, k)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = d.mangle(i, qs[i], out[i])
	}
	return out, nil
}

func exactData(n, nq, dim int) ([]store.Record, []store.Query) {
	r := rand.New(rand.NewPCG(3, 4))
	locales := []string{"en", "es-419", "pt-BR"}
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	recs := make([]store.Record, n)
	for i := range recs {
		recs[i] = store.Record{ID: fmt.Sprintf("c%d", i), Locale: locales[i%3], Vector: vec()}
	}
	qs := make([]store.Query, nq)
	for i := range qs {
		qs[i] = store.Query{Vector: vec()}
		if i%2 == 0 {
			qs[i].Locale = locales[i%3]
		}
	}
	return recs, qs
}

// checkStore runs the exact check of st on qs (every query) at depth k.
func checkStore(t *testing.T, st store.Store, qs []store.Query, k, sample int, floor float64) *ANNCheck {
	t.Helper()
	ctx := context.Background()
	e, err := newExactChecker(st, sample, k, func(string, ...any) {})
	require.NoError(t, err)
	hits, err := st.Search(ctx, qs, k)
	require.NoError(t, err)
	for i, q := range qs {
		require.NoError(t, e.observe(ctx, fmt.Sprintf("q%d", i), "", i+1, q, hits[i]))
	}
	c, err := e.result(ctx, floor, floor >= 0)
	require.NoError(t, err)
	return c
}

// A broken index is caught: answers that lose some of the exact neighbours,
// that ignore the locale filter, or that name records the store does not hold
// lower the recall by exactly their share; a tie at the last place counts.
func TestExactCheckCatchesDegradedAnswers(t *testing.T) {
	ctx := context.Background()
	recs, qs := exactData(600, 40, 16)
	const k = 10
	mem := memory.New(2)
	require.NoError(t, mem.Add(ctx, recs))
	all := func() []store.Query { // the same queries, unfiltered
		out := slices.Clone(qs)
		for i := range out {
			out[i].Locale = ""
		}
		return out
	}()
	unfiltered, err := mem.Search(ctx, all, k)
	require.NoError(t, err)
	tests := []struct {
		name   string
		mangle func(i int, q store.Query, hits []store.Hit) []store.Hit
		recall float64
	}{
		{"exact", func(_ int, _ store.Query, h []store.Hit) []store.Hit { return h }, 1},
		{"the last three replaced by the next ones", func(_ int, _ store.Query, h []store.Hit) []store.Hit {
			out := slices.Clone(h[:k-3])
			for j := range 3 {
				out = append(out, store.Hit{ID: "missing-" + fmt.Sprint(j)})
			}
			return out
		}, 0.7},
		{"half the answer", func(_ int, _ store.Query, h []store.Hit) []store.Hit { return h[:k/2] }, 0.5},
		{"order reversed: a set, the same recall", func(_ int, _ store.Query, h []store.Hit) []store.Hit {
			out := slices.Clone(h)
			slices.Reverse(out)
			return out
		}, 1},
		{"a duplicate does not count twice", func(_ int, _ store.Query, h []store.Hit) []store.Hit {
			out := slices.Clone(h)
			out[k-1] = out[0]
			return out
		}, 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkStore(t, &degraded{Store: mem, mangle: tt.mangle}, qs, k, ExactAll, -1)
			assert.Equal(t, int64(40), c.N)
			assert.InDelta(t, tt.recall, c.Recall, 1e-12)
			assert.LessOrEqual(t, c.CI95.Lo, c.Recall)
			assert.GreaterOrEqual(t, c.CI95.Hi, c.Recall)
			assert.Equal(t, outcome.Off, c.Gate.Status)
			if tt.recall == 1 {
				assert.Equal(t, int64(40), c.Perfect)
			}
		})
	}
	// A filter bug: the store answers a filtered query from every locale.
	// Only the entries of the query's locale count.
	c := checkStore(t, &degraded{Store: mem, mangle: func(i int, q store.Query, h []store.Hit) []store.Hit {
		if q.Locale == "" {
			return h
		}
		return unfiltered[i]
	}}, qs, k, ExactAll, 0.9)
	assert.Less(t, c.Recall, 0.8)
	assert.Greater(t, c.Recall, 0.4, "the unfiltered queries are still right")
	assert.Equal(t, outcome.Fail, c.Gate.Status)
	assert.Equal(t, outcome.ANNRecallBelow, c.Gate.Why[0].Code)
	assert.Equal(t, outcome.Interval95, c.Gate.Why[1].Code)
}

// A query with no record of its locale has no exact answer: not counted;
// with no query counted the gate fails, saying so.
func TestExactCheckNoNeighbour(t *testing.T) {
	ctx := context.Background()
	recs, _ := exactData(30, 0, 8)
	mem := memory.New(1)
	require.NoError(t, mem.Add(ctx, recs))
	q := store.Query{Vector: recs[0].Vector, Locale: "fr"}
	c := checkStore(t, mem, []store.Query{q, q}, 5, ExactAll, 0.5)
	assert.Equal(t, int64(0), c.N)
	assert.Equal(t, int64(2), c.NoNeighbour)
	assert.Equal(t, outcome.Fail, c.Gate.Status)
	assert.Equal(t, []outcome.Clause{{Code: outcome.NoANNQuery, N: 2, M: 2}}, c.Gate.Why)
}

// The sample is the N queries of smallest key.
func TestExactSampleKeys(t *testing.T) {
	ctx := context.Background()
	recs, qs := exactData(90, 200, 8)
	mem := memory.New(1)
	require.NoError(t, mem.Add(ctx, recs))
	e, err := newExactChecker(mem, 17, 5, func(string, ...any) {})
	require.NoError(t, err)
	hits, err := mem.Search(ctx, qs, 5)
	require.NoError(t, err)
	var keys []uint64
	for i, q := range qs {
		id := fmt.Sprintf("q%d", i)
		require.NoError(t, e.observe(ctx, id, "", i+1, q, hits[i]))
		h := fnv.New64a()
		_, _ = h.Write([]byte(id))
		keys = append(keys, h.Sum64())
	}
	slices.Sort(keys)
	var kept []uint64
	for _, s := range e.kept {
		kept = append(kept, s.key)
	}
	slices.Sort(kept)
	assert.Equal(t, keys[:17], kept)
	c, err := e.result(ctx, 0, false)
	require.NoError(t, err)
	assert.Equal(t, int64(17), c.N)
	assert.Equal(t, int64(200), c.Queries)
}

// A store that cannot read its vectors back is refused.
func TestExactCheckNeedsAnExporter(t *testing.T) {
	_, err := newExactChecker(struct{ store.Store }{memory.New(1)}, ExactAll, 5, nil)
	require.EqualError(t, err, "the store memory cannot read its vectors back for --exact-check")
}

// Queries in families (the cases' cluster keys): an index that loses half
// the neighbours of every query of 2 of 6 families of 10 queries. Over the
// 60 queries as if independent the recall 0.833 got the hall-t interval of
// 20 values of 0.5 among 40 of 1; the families moved together, and the
// interval is over the 6 clusters (cluster-t, widened to the queries' where
// that reaches further), and says so.
func TestExactCheckOverClusters(t *testing.T) {
	ctx := context.Background()
	recs, qs := exactData(600, 60, 16)
	const k = 10
	mem := memory.New(2)
	require.NoError(t, mem.Add(ctx, recs))
	st := &degraded{Store: mem, mangle: func(_ int, _ store.Query, h []store.Hit) []store.Hit { return h }}
	e, err := newExactChecker(st, ExactAll, k, func(string, ...any) {})
	require.NoError(t, err)
	hits, err := mem.Search(ctx, qs, k)
	require.NoError(t, err)
	miss, clus := metrics.NewHistogram(), metrics.NewClusterTally()
	for i, q := range qs {
		h, r := hits[i], 1.0
		if i/10 < 2 {
			h, r = h[:k/2], 0.5
		}
		miss.Add(1 - r)
		clus.Add(fmt.Sprint("family ", i/10), 1-r)
		require.NoError(t, e.observe(ctx, fmt.Sprintf("q%d", i), fmt.Sprint("family ", i/10), i+1, q, h))
	}
	c, err := e.result(ctx, 0.95, true)
	require.NoError(t, err)
	assert.InDelta(t, 50.0/60, c.Recall, 1e-12)
	assert.Equal(t, int64(6), c.Clusters)
	alone := miss.DifferenceCI95(0, 1)
	want := clus.CI95(miss, 0, 1).Widen(alone).Interval
	assert.InDelta(t, 1-want.Hi, c.CI95.Lo, 1e-12)
	assert.InDelta(t, 1-want.Lo, c.CI95.Hi, 1e-12)
	assert.Contains(t, []string{metrics.MethodClusterT, metrics.MethodClusterHull}, c.CI95.Method)
	assert.True(t, c.CI95.Unreliable, "6 clusters")
	assert.Less(t, c.CI95.Lo, 1-alone.Hi, "the families' interval reaches further down than the queries'")
	require.Len(t, c.Gate.Why, 2)
	assert.Equal(t, int64(6), c.Gate.Why[1].M, "the gate's interval names its clusters")
}

// A store that holds fewer records a query can match than the depth asked:
// the exact list is every record the query's locale filter lets through, and
// the check says the depth it measured, not the one asked (the demo's 38
// chunks under hybrid's 50 were reported as recall@50). exactData's 30
// records are 10 a locale; the filtered queries' lists hold 10, the others 20
// of the 30 at k = 20, and 30 at k = 40.
func TestExactCheckMeasuredDepth(t *testing.T) {
	ctx := context.Background()
	recs, qs := exactData(30, 12, 8)
	mem := memory.New(1)
	require.NoError(t, mem.Add(ctx, recs))
	tests := []struct {
		name     string
		k        int
		qs       []store.Query
		measured [2]int
	}{
		{"as deep as asked", 5, qs, [2]int{5, 5}},
		{"the filtered queries' locale is short", 20, qs, [2]int{10, 20}},
		{"every list short", 40, qs, [2]int{10, 30}},
		{"the whole store", 40, qs[1:2], [2]int{30, 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			degrade := &degraded{Store: mem, mangle: func(_ int, _ store.Query, h []store.Hit) []store.Hit { return h[:len(h)/2] }}
			c := checkStore(t, degrade, tt.qs, tt.k, ExactAll, 0.9)
			assert.Equal(t, tt.k, c.Depth)
			assert.Equal(t, tt.measured, c.Measured)
			require.Equal(t, outcome.Fail, c.Gate.Status)
			assert.Equal(t, outcome.ANNRecallBelow, c.Gate.Why[0].Code)
			assert.Equal(t, int64(tt.k), c.Gate.Why[0].M)
			assert.Equal(t, [2]int64{int64(tt.measured[0]), int64(tt.measured[1])}, c.Gate.Why[0].Span)
		})
	}
	// No query checked: no depth measured.
	c := checkStore(t, mem, []store.Query{{Vector: recs[0].Vector, Locale: "fr"}}, 5, ExactAll, -1)
	assert.Equal(t, [2]int{0, 0}, c.Measured)
}
