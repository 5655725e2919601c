package baseline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// oline is a baseline line with a top k (top "" leaves it out: an older
// baseline's case without gold).
func oline(id, gold, top string) string {
	s := `{"id":"` + id + `","type":"golden","locale":"en"`
	if gold != "" {
		s += `,"gold":["` + gold + `"],"scores":{"retrieval_hit_at_k":1,"retrieval_recall_at_k":1,"retrieval_ndcg_at_k":1},"rank":1`
	} else {
		s += `,"scores":{}`
	}
	if top != "" {
		s += `,"top":["` + strings.Join(strings.Split(top, ""), `","`) + `"]`
	}
	return s + "}\n"
}

type ocase struct {
	id, gold, top string
}

// overlapRun joins the cases as check does (Prepare on a worker, then Add in
// file order) or with Add alone (prepare false).
func overlapRun(t *testing.T, b *Baseline, k int, cases []ocase, prepare bool) *Comparison {
	t.Helper()
	c := NewComparer(b, Options{K: k})
	for i, x := range cases {
		r := gate.CaseResult{File: "run.jsonl", Line: i + 1, ID: x.id, Type: "golden", Locale: "en", Scored: x.gold != ""}
		var gold []string
		cu := Current{IDHash: IDHash(x.id), Top: strings.Split(x.top, "")}
		if x.gold != "" {
			gold = []string{x.gold}
			for m := range r.Scores {
				r.Scores[m], r.Has[m] = 1, true
			}
			cu.Ranked, cu.Rank = true, 1
		} else {
			cu.HasTop = true
		}
		cu.GoldHash = GoldHash(gold)
		line := CaseLine{ID: x.id, Gold: gold, Query: "q " + x.id}
		if prepare && !c.Prepare(&r, &cu) {
			line, cu.Top = CaseLine{}, nil // what check keeps of a case that is not listed
		}
		c.Add(&r, &line, &cu)
	}
	res, err := c.Result()
	require.NoError(t, err)
	return res
}

func TestOverlap(t *testing.T) {
	base := oline("s1", "a", "abcde") + oline("s2", "a", "abcde") +
		oline("n1", "", "abcde") + oline("n2", "", "abcde") + oline("n3", "", "abcde") + oline("n4", "", "abcde") +
		oline("old", "", "")
	cases := []ocase{
		{"s1", "a", "abcde"}, // paired, same
		{"s2", "a", "bacde"}, // paired, first two swapped
		{"n1", "", "abcde"},  // without gold, same
		{"n2", "", "xyzab"},  // without gold, moved most
		{"n3", "", "abcdx"},  // without gold, moved least
		{"n4", "", "abc"},    // without gold, ended after 3: a change
		{"old", "", "abc"},   // the baseline has no top k
	}
	for _, prepare := range []bool{true, false} {
		t.Run(fmt.Sprint("prepare=", prepare), func(t *testing.T) {
			res := overlapRun(t, load(t, base), 5, cases, prepare)
			o := res.Overlap
			assert.Equal(t, 0.9, o.P)
			assert.Equal(t, 5, o.Depth)
			assert.InDelta(t, metrics.RBOPrefixWeight(0.9, 5), o.Weight, 0)
			rbo := func(a, b string) float64 {
				return metrics.RBOExtEnded(strings.Split(a, ""), strings.Split(b, ""), 0.9)
			}
			assert.Equal(t, int64(2), o.Paired.N)
			assert.Equal(t, int64(1), o.Paired.Changed)
			assert.Zero(t, o.Paired.Unknown)
			assert.Zero(t, o.Paired.Clusters)
			assert.InDelta(t, (1+rbo("abcde", "bacde"))/2, o.Paired.RBO.Mean, 1e-15)
			assert.Equal(t, int64(4), o.WithoutGold.N)
			assert.Equal(t, int64(3), o.WithoutGold.Changed)
			assert.Equal(t, int64(1), o.WithoutGold.Unknown)
			assert.InDelta(t, (1+rbo("abcde", "xyzab")+rbo("abcde", "abcdx")+rbo("abcde", "abc"))/4, o.WithoutGold.RBO.Mean, 1e-15)
			// Each group's mean RBO has the churn's interval: that of 1 − RBO
			// over [0, 1], mapped back.
			for _, g := range []struct {
				got  OverlapGroup
				rbos []float64
			}{
				{o.Paired, []float64{1, rbo("abcde", "bacde")}},
				{o.WithoutGold, []float64{1, rbo("abcde", "xyzab"), rbo("abcde", "abcdx"), rbo("abcde", "abc")}},
			} {
				dist := metrics.NewHistogram()
				for _, v := range g.rbos {
					dist.Add(1 - v)
				}
				iv := dist.DifferenceCI95(0, 1)
				assert.Equal(t, metrics.MethodHallTBetting, iv.Method)
				assert.Equal(t, iv.Method, g.got.RBO.CI95.Method)
				assert.Equal(t, g.got.N, g.got.RBO.CI95.N)
				assert.InDelta(t, 1-iv.Hi, g.got.RBO.CI95.Lo, 1e-15)
				assert.InDelta(t, 1-iv.Lo, g.got.RBO.CI95.Hi, 1e-15)
				assert.LessOrEqual(t, g.got.RBO.CI95.Lo, g.got.RBO.Mean)
				assert.GreaterOrEqual(t, g.got.RBO.CI95.Hi, g.got.RBO.Mean)
			}
			require.Len(t, o.MostChanged, 3)
			// xyzab (0.42) < abc, ended (0.72) < abcdx (0.87)
			assert.Equal(t, []string{"n2", "n4", "n3"}, []string{o.MostChanged[0].ID, o.MostChanged[1].ID, o.MostChanged[2].ID})
			m := o.MostChanged[0]
			assert.Equal(t, rbo("abcde", "xyzab"), m.RBO)
			assert.Equal(t, []string{"a", "b", "c", "d", "e"}, m.Before)
			assert.Equal(t, []string{"x", "y", "z", "a", "b"}, m.After)
			assert.Equal(t, "q n2", m.Query)
			assert.Equal(t, 4, m.Line)
			assert.Equal(t, rbo("abcde", "abc"), o.MostChanged[1].RBO)
			assert.Equal(t, rbo("abcde", "abcdx"), o.MostChanged[2].RBO)
		})
	}
}

// TestOverlapDepthAndFlips: the top k are cut to the smaller k of the two runs,
// and a flip carries its RBO (NaN when the baseline has no top k).
func TestOverlapDepthAndFlips(t *testing.T) {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	for _, l := range []string{
		`{"id":"f","gold":["a"],"scores":{"retrieval_hit_at_k":1,"retrieval_recall_at_k":1,"retrieval_ndcg_at_k":1},"rank":1,"top":["a","b","c"]}`,
		`{"id":"n","scores":{},"top":["a","b","c"]}`,
	} {
		_, err := zw.Write([]byte(l + "\n"))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	var file bytes.Buffer
	require.NoError(t, WriteFile(&file, &Header{K: 3, Cases: 2}, &body))
	b, err := Load(context.Background(), &file, "b.jsonl.gz", t.TempDir())
	require.NoError(t, err)
	defer b.Close()
	c := NewComparer(b, Options{K: 5})
	r := gate.CaseResult{File: "run.jsonl", Line: 1, ID: "f", Type: "golden", Scored: true}
	for m := range r.Scores {
		r.Has[m] = true // all 0: newly missed
	}
	cu := Current{IDHash: IDHash("f"), GoldHash: GoldHash([]string{"a"}), Ranked: true, Top: []string{"x", "b", "c", "a", "y"}}
	c.Add(&r, &CaseLine{ID: "f", Gold: []string{"a"}}, &cu)
	r2 := gate.CaseResult{File: "run.jsonl", Line: 2, ID: "n", Type: "golden"}
	cu2 := Current{IDHash: IDHash("n"), HasTop: true, Top: []string{"a", "b", "c", "x", "y"}}
	c.Add(&r2, &CaseLine{ID: "n"}, &cu2)
	res, err := c.Result()
	require.NoError(t, err)
	assert.Equal(t, 3, res.Overlap.Depth)
	require.Len(t, res.NewlyMissed, 1)
	assert.Equal(t, metrics.RBOExtEnded([]string{"a", "b", "c"}, []string{"x", "b", "c"}, 0.9), res.NewlyMissed[0].RBO)
	// The case without gold is the same at depth 3 (the rest lies beyond the baseline's k).
	assert.Equal(t, int64(1), res.Overlap.WithoutGold.N)
	assert.Zero(t, res.Overlap.WithoutGold.Changed)
	assert.Zero(t, res.Overlap.WithoutGold.Unknown)
	assert.Zero(t, res.Overlap.WithoutGold.Clusters)
	assert.InDelta(t, 1.0, res.Overlap.WithoutGold.RBO.Mean, 0)
	assert.Empty(t, res.Overlap.MostChanged)
	// A flip against a --cases-out baseline (no top k): RBO unknown.
	b2 := load(t, bline("f", "a", 1, 1)[:len(bline("f", "a", 1, 1))-len(`,"rank":1,"top":["x"]}`+"\n")]+"}\n")
	c2 := NewComparer(b2, Options{K: 5})
	cu = Current{IDHash: IDHash("f"), GoldHash: GoldHash([]string{"a"}), Ranked: true, Top: []string{"x"}}
	c2.Add(&r, &CaseLine{ID: "f", Gold: []string{"a"}}, &cu)
	res, err = c2.Result()
	require.NoError(t, err)
	require.Len(t, res.NewlyMissed, 1)
	assert.True(t, math.IsNaN(res.NewlyMissed[0].RBO))
	assert.Equal(t, int64(1), res.Overlap.Paired.Unknown)
	assert.True(t, math.IsNaN(res.Overlap.Paired.RBO.Mean))
	// No case to compare: no interval, no method.
	assert.True(t, math.IsNaN(res.Overlap.Paired.RBO.CI95.Lo))
	assert.True(t, math.IsNaN(res.Overlap.Paired.RBO.CI95.Hi))
	assert.Empty(t, res.Overlap.Paired.RBO.CI95.Method)
}

// TestOverlapIntervalIsTheChurns: the overlap lines' mean RBO has the churn's
// interval (one method, rboTally), clusters included. Every case here is
// without gold in both runs, so the cases without gold are the cases the churn
// counts overall: the two estimates and their clusters are one, in families
// (cluster-t, widened to the interval over the cases: cluster-t-hull) as
// without them (hall-t from 50 cases).
func TestOverlapIntervalIsTheChurns(t *testing.T) {
	tops := []string{"abcde", "abcde", "abcde", "bacde", "abcdx", "xyzab", "abc", "vwxyz"}
	var base strings.Builder
	for i := range 120 {
		base.WriteString(oline(fmt.Sprintf("c%03d", i), "", "abcde"))
	}
	b := load(t, base.String())
	for _, families := range []bool{false, true} {
		t.Run(fmt.Sprint("families=", families), func(t *testing.T) {
			c := NewComparer(b, Options{K: 5})
			for i := range 120 {
				id := fmt.Sprintf("c%03d", i)
				r := gate.CaseResult{File: "run.jsonl", Line: i + 1, ID: id, Type: "golden", Locale: "en"}
				// Families of four share a top k; every fifth case has no key.
				cu := Current{IDHash: IDHash(id), HasTop: true, GoldHash: GoldHash(nil), Top: strings.Split(tops[(i/4)%len(tops)], "")}
				if families && i%5 != 0 {
					cu.Cluster = fmt.Sprintf("f%d", i/4)
				}
				c.Add(&r, &CaseLine{ID: id, Query: "q"}, &cu)
			}
			res, err := c.Result()
			require.NoError(t, err)
			o, ch := res.Overlap.WithoutGold, res.Churn.Overall
			assert.Equal(t, int64(120), o.N)
			assert.Equal(t, ch.N, o.N)
			assert.Equal(t, ch.RBO, o.RBO)
			assert.Equal(t, ch.Clusters, o.Clusters)
			assert.Equal(t, int64(120), o.RBO.CI95.N)
			if families {
				assert.Equal(t, int64(30+24), o.Clusters, "30 families, 24 cases without a key")
				assert.Contains(t, []string{metrics.MethodClusterT, metrics.MethodClusterHull}, o.RBO.CI95.Method)
			} else {
				assert.Zero(t, o.Clusters)
				assert.Equal(t, metrics.MethodHallT, o.RBO.CI95.Method)
			}
			// 54 clusters: below metrics.ClusterReliableMinClusters
			assert.Equal(t, families, o.RBO.CI95.Unreliable)
			assert.Less(t, o.RBO.CI95.Lo, o.RBO.Mean)
			assert.Greater(t, o.RBO.CI95.Hi, o.RBO.Mean)
			assert.Zero(t, res.Overlap.Paired.N)
			assert.True(t, math.IsNaN(res.Overlap.Paired.RBO.CI95.Lo))
		})
	}
}

// TestMostChangedBounded: of many changed cases without gold, the DefaultMaxMoved
// lowest are kept, lowest first, ties in file order; Prepare's filter keeps the
// same list as joining every case in full.
func TestMostChangedBounded(t *testing.T) {
	var base strings.Builder
	var cases []ocase
	tops := []string{"abcdx", "xbcde", "axcde", "abxde", "abcxe", "xyzde", "xyzwe", "vwxyz"}
	for i := range 200 {
		id := fmt.Sprintf("c%03d", i)
		base.WriteString(oline(id, "", "abcde"))
		cases = append(cases, ocase{id, "", tops[(i*7)%len(tops)]})
	}
	b := load(t, base.String())
	full := overlapRun(t, b, 5, cases, false)
	got := overlapRun(t, b, 5, cases, true)
	require.Len(t, got.Overlap.MostChanged, DefaultMaxMoved)
	assert.Equal(t, full.Overlap.MostChanged, got.Overlap.MostChanged)
	prev := -1.0
	prevLine := 0
	for _, m := range got.Overlap.MostChanged {
		assert.GreaterOrEqual(t, m.RBO, prev)
		if m.RBO == prev {
			assert.Greater(t, m.Line, prevLine, "ties in file order")
		}
		prev, prevLine = m.RBO, m.Line
	}
	assert.Equal(t, "vwxyz", strings.Join(got.Overlap.MostChanged[0].After, ""))
	assert.Equal(t, int64(200), got.Overlap.WithoutGold.Changed)
}

// TestAppendCaseLineTopWithoutGold: a case without gold keeps its top k (no rank)
// through a write and a read.
func TestAppendCaseLineTopWithoutGold(t *testing.T) {
	c := CaseLine{ID: "n", Type: "golden", HasTop: true, Top: []string{"a", "b"}}
	line := AppendCaseLine(nil, &c)
	assert.JSONEq(t, `{"id":"n","type":"golden","scores":{},"top":["a","b"]}`, string(line))
	assert.Equal(t, byte('\n'), line[len(line)-1], "one line")
	b := load(t, string(line))
	got, err := b.detail(0)
	require.NoError(t, err)
	want := c // detail keeps what the reports list
	want.Type = ""
	assert.Equal(t, want, got)
	assert.Equal(t, []uint64{IDHash("a"), IDHash("b")}, b.top(b.recs.at(0)))
}

// TestLoadBatches: a baseline of many batches loads every record in file order,
// and of two errors the earlier line's is reported, whichever batch it is in.
func TestLoadBatches(t *testing.T) {
	var sb strings.Builder
	n := 3*batchLines + 17
	for i := range n {
		sb.WriteString(oline(fmt.Sprintf("c%05d", i), "g", "abc"))
	}
	b := load(t, sb.String())
	require.Equal(t, n, b.recs.n)
	for i := range n {
		idx := b.lookup(IDHash(fmt.Sprintf("c%05d", i)))
		require.Equal(t, i, idx)
		require.Equal(t, i+1, b.lineOf(i))
	}
	d, err := b.detail(n - 1)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("c%05d", n-1), d.ID)

	lines := strings.SplitAfter(sb.String(), "\n")
	dupAt, badAt := 2*batchLines+5, 2*batchLines+9
	lines[dupAt-1] = oline("c00003", "g", "abc")
	lines[badAt-1] = "{\n"
	_, err = Load(context.Background(), strings.NewReader(strings.Join(lines, "")), "base.jsonl", t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("base.jsonl:%d: duplicate case id \"c00003\" (first at line 4)", dupAt))
	lines[dupAt-1], lines[badAt-1] = "{\n", oline("c00003", "g", "abc")
	_, err = Load(context.Background(), strings.NewReader(strings.Join(lines, "")), "base.jsonl", t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("base.jsonl:%d: invalid JSON", dupAt))
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString(oline(fmt.Sprintf("c%05d", i), "g", "abc"))
	}
	_, err := Load(ctx, strings.NewReader(sb.String()), "base.jsonl", t.TempDir())
	require.Error(t, err)
}

// TestLoadCancelledMidRead: a baseline on a pipe whose writer stalls stops
// within a second of the cancellation, with the context's error.
func TestLoadCancelledMidRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		for i := range 3000 {
			if _, err := io.WriteString(pw, oline(fmt.Sprintf("c%05d", i), "g", "abc")); err != nil {
				return
			}
		}
		// then nothing more: the writer stalls
	}()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Load(ctx, pr, "base.jsonl", t.TempDir())
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second, "within a second of the cancellation, with slack for a loaded machine")
}
