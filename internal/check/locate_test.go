package check

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

// Locate renames every place of the cases input, and nothing else: a
// baseline record's line (no file) and a place in another file stay.
func TestLocate(t *testing.T) {
	locate := func(n int) (string, int) {
		if n <= 2 {
			return "s/a.jsonl", n
		}
		return "s/b.jsonl", n - 2
	}
	r := &Result{
		Gate: &gate.Result{
			Integrity: gate.Integrity{Problems: []gate.Problem{{File: "s", Line: 3}, {File: "other", Line: 3}, {File: "s", Line: 0}}},
			Missed:    []*gate.CaseResult{{File: "s", Line: 1}, {File: "s", Line: 4}},
		},
		Comparison: &baseline.Comparison{
			NewlyMissed:      []baseline.Flip{{File: "s", Line: 3}},
			NewlyFound:       []baseline.Flip{{File: "s", Line: 2}},
			RankDrops:        []baseline.Flip{{File: "s", Line: 4}},
			OnlyBaselineList: []baseline.CaseRef{{Line: 3}},
			OnlyCurrentList:  []baseline.CaseRef{{File: "s", Line: 3}},
			GoldChangedList:  []baseline.GoldChange{{CaseRef: baseline.CaseRef{File: "s", Line: 4}}},
			Overlap:          baseline.Overlap{MostChanged: []baseline.Moved{{File: "s", Line: 1}}},
		},
	}
	r.Locate("s", locate)
	g, c := r.Gate, r.Comparison
	assert.Equal(t, []gate.Problem{{File: "s/b.jsonl", Line: 1}, {File: "other", Line: 3}, {File: "s", Line: 0}}, g.Integrity.Problems)
	assert.Equal(t, "s/a.jsonl", g.Missed[0].File)
	assert.Equal(t, 1, g.Missed[0].Line)
	assert.Equal(t, "s/b.jsonl", g.Missed[1].File)
	assert.Equal(t, 2, g.Missed[1].Line)
	assert.Equal(t, baseline.Flip{File: "s/b.jsonl", Line: 1}, c.NewlyMissed[0])
	assert.Equal(t, baseline.Flip{File: "s/a.jsonl", Line: 2}, c.NewlyFound[0])
	assert.Equal(t, baseline.Flip{File: "s/b.jsonl", Line: 2}, c.RankDrops[0])
	assert.Equal(t, baseline.CaseRef{Line: 3}, c.OnlyBaselineList[0])
	assert.Equal(t, baseline.CaseRef{File: "s/b.jsonl", Line: 1}, c.OnlyCurrentList[0])
	assert.Equal(t, baseline.CaseRef{File: "s/b.jsonl", Line: 2}, c.GoldChangedList[0].CaseRef)
	assert.Equal(t, baseline.Moved{File: "s/a.jsonl", Line: 1}, c.Overlap.MostChanged[0])

	var empty Result
	empty.Locate("s", locate) // no gate, no comparison
}

// LocateBaseline names the cases only in a sharded baseline at their shard
// and line there; a place already named (a file given) or without a line
// stays, and the cases input's places are left to Locate.
func TestLocateBaseline(t *testing.T) {
	locate := func(n int) (string, int) {
		if n <= 2 {
			return "b/p0.jsonl", n
		}
		return "b/p1.jsonl", n - 2
	}
	for _, tc := range []struct {
		name     string
		in, want []baseline.CaseRef
	}{
		{"the first shard", []baseline.CaseRef{{ID: "x", Line: 2}}, []baseline.CaseRef{{ID: "x", File: "b/p0.jsonl", Line: 2}}},
		{"a later shard", []baseline.CaseRef{{ID: "x", Line: 4}}, []baseline.CaseRef{{ID: "x", File: "b/p1.jsonl", Line: 2}}},
		{"no line", []baseline.CaseRef{{ID: "x"}}, []baseline.CaseRef{{ID: "x"}}},
		{"named already", []baseline.CaseRef{{ID: "x", File: "f", Line: 4}}, []baseline.CaseRef{{ID: "x", File: "f", Line: 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := []baseline.CaseRef{{File: "s", Line: 4}}
			r := &Result{Comparison: &baseline.Comparison{OnlyBaselineList: tc.in, OnlyCurrentList: cur}}
			r.LocateBaseline(locate)
			assert.Equal(t, tc.want, r.Comparison.OnlyBaselineList)
			assert.Equal(t, []baseline.CaseRef{{File: "s", Line: 4}}, r.Comparison.OnlyCurrentList)
		})
	}
	var empty Result
	empty.LocateBaseline(locate) // no comparison
	var none *Baseline
	none.Locate(&empty) // no baseline
	one := &Result{Comparison: &baseline.Comparison{OnlyBaselineList: []baseline.CaseRef{{Line: 3}}}}
	(&Baseline{}).Locate(one) // one baseline file: its line stays
	assert.Equal(t, []baseline.CaseRef{{Line: 3}}, one.Comparison.OnlyBaselineList)
}

// What check writes per case from shards holds no shard: a --write-baseline
// record's line is the case's line in the shards read as one stream (a blank
// line counted, as in one file), the only order a later --baseline pairs
// on, and a --cases-out line has no line (docs/shards.md).
func TestShardedLinesWritten(t *testing.T) {
	dir := t.TempDir()
	c := func(id string) string {
		return `{"id": "` + id + `", "locale": "en", "type": "golden", "query": "q", "must_cite_one_of": ["en-invoices"], "retrieved": ["en-invoices"]}` + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(c("c1")+c("c2")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("\n"+c("c3")+c("c4")), 0o644))
	ctx := context.Background()
	sh, err := input.OpenSharded(ctx, dir)
	require.NoError(t, err)
	defer sh.Close()
	kb, err := kbfile.Load(ctx, demo+"/kb")
	require.NoError(t, err)
	var body, casesOut bytes.Buffer
	_, err = Run(ctx, In{Cases: sh, CasesName: dir, KB: kb, BaselineBody: &body, CasesOut: &casesOut}, Options{K: 5})
	require.NoError(t, err)

	zr, err := gzip.NewReader(&body)
	require.NoError(t, err)
	var lines []int
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var rec struct{ Line int }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		lines = append(lines, rec.Line)
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, []int{1, 2, 4, 5}, lines)
	file, line := sh.Locate(4)
	assert.Equal(t, filepath.Join(dir, "b.jsonl"), file, "the stream's line 4 is b.jsonl's line 2")
	assert.Equal(t, 2, line)
	assert.NotContains(t, casesOut.String(), `"line"`)
	assert.Equal(t, 4, strings.Count(casesOut.String(), "\n"))
}
