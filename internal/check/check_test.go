package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

const demo = "../../testdata/demo"

func demoIn(t *testing.T, cases string) In {
	t.Helper()
	kb, err := kbfile.Load(context.Background(), demo+"/kb")
	require.NoError(t, err)
	f, err := os.Open(cases)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return In{Cases: f, CasesName: cases, KB: kb}
}

// TestRunBaseline: the regressed demo against the demo's baseline fails its
// regression gate; the baseline written by one run, read by the next, pairs
// every case with no difference.
func TestRunBaseline(t *testing.T) {
	ctx := context.Background()
	in := demoIn(t, demo+"/regressed.jsonl")
	base, err := os.Open(demo + "/baseline.jsonl.gz")
	require.NoError(t, err)
	defer base.Close()
	in.Baseline, in.BaselineName = base, "baseline.jsonl.gz"
	var casesOut bytes.Buffer
	in.CasesOut = &casesOut
	o := Options{K: 5, ReferenceLocale: "en", MaxDrop: map[string]baseline.Tolerance{"retrieval_hit_at_k": {Set: true, Value: 0.01}}}
	res, err := Run(ctx, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Comparison)
	assert.True(t, res.Comparison.Available)
	assert.Equal(t, outcome.Fail, res.Comparison.Regression)
	assert.Equal(t, int64(strings.Count(casesOut.String(), "\n")), res.Gate.Total, "one --cases-out line a case")
	assert.NotEmpty(t, res.KBFingerprint)

	// Write a baseline of the demo, then compare the demo with it.
	var body bytes.Buffer
	in = demoIn(t, demo+"/cases.jsonl")
	in.BaselineBody = &body
	res, err = Run(ctx, in, o)
	require.NoError(t, err)
	assert.Nil(t, res.Comparison, "writing a baseline compares with none")
	var file bytes.Buffer
	require.NoError(t, baseline.WriteFile(&file, &baseline.Header{K: 5, Cases: res.Gate.Total, KBFingerprint: res.KBFingerprint, Aggregates: []byte("{}")}, &body))
	in = demoIn(t, demo+"/cases.jsonl")
	in.Baseline, in.BaselineName = &file, "written"
	res, err = Run(ctx, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Comparison)
	assert.Equal(t, outcome.Pass, res.Comparison.Regression)
	assert.Equal(t, res.Gate.WithGold, res.Comparison.Paired)
	assert.Zero(t, res.Comparison.NewlyMissedTotal+res.Comparison.NewlyFoundTotal+res.Comparison.RankDropsTotal)
}

func TestRunUnavailableAndErrors(t *testing.T) {
	ctx := context.Background()
	in := demoIn(t, demo+"/cases.jsonl")
	in.BaselineUnavailable = &baseline.Unavailability{Code: baseline.NotInActions}
	res, err := Run(ctx, in, Options{K: 5})
	require.NoError(t, err)
	require.NotNil(t, res.Comparison)
	assert.False(t, res.Comparison.Available)

	// A bad baseline is an input error naming it; nothing is scored.
	in = demoIn(t, demo+"/cases.jsonl")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = io.WriteString(zw, "{\n")
	require.NoError(t, zw.Close())
	in.Baseline, in.BaselineName = &gz, "bad.jsonl.gz"
	_, err = Run(ctx, in, Options{K: 5})
	require.ErrorContains(t, err, "bad.jsonl.gz:1:")
}

// Duplicate case ids are found after the stream (gate.Accumulator.Duplicate);
// the error is still the one a case-by-case check meets first: the earliest
// duplicate, unless an error on an earlier line stopped the stream.
func TestRunDuplicatePrecedence(t *testing.T) {
	line := func(id string) string { return `{"id": "` + id + `", "query": "q"}` + "\n" }
	many := func(n int, edit map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := edit[i]; ok {
				b.WriteString(s)
				continue
			}
			b.WriteString(line(fmt.Sprintf("c%d", i)))
		}
		return b.String()
	}
	tests := map[string]struct{ cases, want string }{
		"duplicate before a malformed line": {line("a") + line("b") + line("a") + line("c") + "{\"id\": bad\n",
			`cases.jsonl:3: duplicate case id "a" (first at line 1)`},
		"malformed line before a duplicate": {line("a") + "{\"id\": bad\n" + line("a"),
			`cases.jsonl:2: malformed JSON: unexpected character 'b' looking for a value at column 8`},
		"the earliest of two duplicates": {line("a") + line("b") + line("c") + line("b") + line("a"),
			`cases.jsonl:4: duplicate case id "b" (first at line 2)`},
		"a long id": {line("x") + line(strings.Repeat("long", 20)) + line("y") + line(strings.Repeat("long", 20)),
			`cases.jsonl:4: duplicate case id "` + strings.Repeat("long", 20) + `" (first at line 2)`},
		"across blocks, before a later error": {many(100000, map[int]string{90000: line("c10"), 95000: line("c7"), 99000: "[]\n"}),
			`cases.jsonl:90000: duplicate case id "c10" (first at line 10)`},
		"a case error before a duplicate": {many(100000, map[int]string{50000: `{"id": "x", "retrieved": [], "scores": {}}` + "\n", 90000: line("c10")}),
			`cases.jsonl:50000: case "x" has both "retrieved" and "scores"; give one`},
	}
	kb, err := kbfile.Load(context.Background(), demo+"/kb")
	require.NoError(t, err)
	// Each as a reader (the accumulator keeps the ids), as a regular file
	// (the duplicate's id read again from it) and as one read from an offset
	// past other bytes (a shell's redirect of a file it has read from).
	dir := t.TempDir()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Run(context.Background(), In{Cases: strings.NewReader(tt.cases), CasesName: "cases.jsonl", KB: kb}, Options{K: 5})
			require.EqualError(t, err, tt.want)

			path := dir + "/" + strings.ReplaceAll(name, " ", "-")
			const before = `{"id": "a"} {"id": "b"}` + "\n"
			require.NoError(t, os.WriteFile(path, []byte(before+tt.cases), 0o600))
			for _, off := range []int64{0, int64(len(before))} {
				f, err := os.Open(path)
				require.NoError(t, err)
				defer f.Close()
				var r io.Reader = f
				if off == 0 {
					r = io.MultiReader(strings.NewReader(before), f) // not read again
				} else {
					_, err = f.Seek(off, io.SeekStart)
					require.NoError(t, err)
				}
				_, err = Run(context.Background(), In{Cases: r, CasesName: "cases.jsonl", KB: kb}, Options{K: 5})
				if off == 0 {
					require.ErrorContains(t, err, "cases.jsonl:1: ", "the reader's first line")
					continue
				}
				require.EqualError(t, err, tt.want, "the file from offset %d", off)
			}
		})
	}
}

// TestIDsReadAgain: a regular file's case ids are read again by line, from
// the offset the file was at (blank lines, white space only included, counted
// as the stream counts them); a reader that is not a regular file gives nil
// (its ids are kept). Each part was checked by undoing it: the offset, the
// skip of a line longer than the buffer, the BOM, the white-space line and
// the id's clone each fail a case here.
func TestIDsReadAgain(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/cases.jsonl"
	const before = "{\"id\": \"skipped\"}\n"
	body := "\n{\"id\": \"a\"}\n\n \t\r\n{\"id\": \"b\\u00e9\", \"query\": \"q\"}\r\n{\"id\": \"c\"}"
	require.NoError(t, os.WriteFile(path, []byte(before+body), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Seek(int64(len(before)), io.SeekStart)
	require.NoError(t, err)
	idAt := idsReadAgain(ctx, f, "cases.jsonl")
	require.NotNil(t, idAt)
	_, err = io.Copy(io.Discard, f) // the stream's own reads move the offset
	require.NoError(t, err)
	for line, want := range map[int]string{2: "a", 5: "bé", 6: "c", 1: "", 3: "", 4: "", 7: ""} {
		id, err := idAt(line)
		require.NoError(t, err)
		assert.Equal(t, want, id, "line %d", line)
	}

	// A BOM on line 1; a line past the reader's buffer skipped whole.
	long := "\ufeff{\"id\": \"x\"}\n{\"id\": \"y\", \"query\": \"" + strings.Repeat("q", 600<<10) + "\"}\n{\"id\": \"z\"}\n"
	require.NoError(t, os.WriteFile(path, []byte(long), 0o600))
	g, err := os.Open(path)
	require.NoError(t, err)
	defer g.Close()
	idAt = idsReadAgain(ctx, g, "cases.jsonl")
	for line, want := range map[int]string{1: "x", 2: "y", 3: "z", 4: ""} {
		id, err := idAt(line)
		require.NoError(t, err)
		assert.Equal(t, want, id, "line %d", line)
	}

	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	assert.Nil(t, idsReadAgain(ctx, pr, "stdin"), "a pipe")
	assert.Nil(t, idsReadAgain(ctx, strings.NewReader(body), "r"), "a reader")
}

// The case reader's strings view its blocks (casefile.MapOptions.StringsInLine),
// with a baseline too: the comparer copies what it lists. Listed cases come
// from the file's start, whose blocks are reused many times before the report
// is built; each listed string must still be its case's.
func TestRunBaselineListsOwnStrings(t *testing.T) {
	ctx := context.Background()
	const n = 12000 // about 3 MB of cases: a dozen read blocks
	cards := []string{"en-reset-password", "en-two-factor", "en-sso-saml", "en-account-deletion", "en-billing-invoices"}
	write := func(variant int) *bytes.Buffer {
		var b bytes.Buffer
		for i := range n {
			if variant == 1 && i%13 == 0 {
				continue // only in this run
			}
			r := slices.Clone(cards)
			if variant == 1 && i%3 == 0 {
				slices.Reverse(r) // a flip or a rank drop
			}
			gold := cards[i%len(cards)]
			if variant == 1 && i%11 == 0 {
				gold = cards[(i+1)%len(cards)] // gold changed
			}
			fmt.Fprintf(&b, `{"id": "case-%d", "locale": "loc-%d", "type": "type-%d", "query": "query number %d", "must_cite_one_of": [%q], "retrieved": [`, i, i%7, i%5, i, gold)
			for j, id := range r {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, `{"id": %q, "score": 0.5}`, id)
			}
			b.WriteString("]}\n")
		}
		return &b
	}
	kb, err := kbfile.Load(ctx, demo+"/kb")
	require.NoError(t, err)
	o := Options{K: 5, ReferenceLocale: "loc-0"}
	var body bytes.Buffer
	res, err := Run(ctx, In{Cases: write(1), CasesName: "base.jsonl", KB: kb, BaselineBody: &body}, o)
	require.NoError(t, err)
	var file bytes.Buffer
	require.NoError(t, baseline.WriteFile(&file, &baseline.Header{K: 5, Cases: res.Gate.Total, KBFingerprint: res.KBFingerprint, Aggregates: []byte("{}")}, &body))
	res, err = Run(ctx, In{Cases: write(0), CasesName: "head.jsonl", KB: kb, Baseline: &file, BaselineName: "base"}, o)
	require.NoError(t, err)
	c := res.Comparison
	require.NotNil(t, c)
	var i int
	own := func(id string) {
		t.Helper()
		_, err := fmt.Sscanf(id, "case-%d", &i)
		require.NoError(t, err, "listed id %q", id)
	}
	lists := 0
	for _, fl := range [][]baseline.Flip{c.NewlyMissed, c.NewlyFound, c.RankDrops} {
		lists += len(fl)
		for _, f := range fl {
			own(f.ID)
			assert.Equal(t, fmt.Sprintf("query number %d", i), f.Query)
			assert.Equal(t, fmt.Sprintf("loc-%d", i%7), f.Locale)
			assert.Equal(t, fmt.Sprintf("type-%d", i%5), f.Type)
			assert.Equal(t, []string{cards[i%len(cards)]}, f.Gold)
			for _, id := range f.After {
				assert.Contains(t, cards, id)
			}
		}
	}
	for _, g := range c.GoldChangedList {
		own(g.ID)
		assert.Equal(t, []string{cards[i%len(cards)]}, g.After)
	}
	for _, r := range c.OnlyCurrentList {
		own(r.ID)
		assert.Zero(t, i%13, "only in this run")
	}
	require.Positive(t, lists)
	require.NotEmpty(t, c.GoldChangedList)
	require.NotEmpty(t, c.OnlyCurrentList)
}
