package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// plainReader hides a file's positioned reads: Run reads it whole, as before
// runs were scored as they are read.
type plainReader struct{ io.Reader }

// streamFiles writes the files of a streamed comparison into a new directory.
func streamFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// runBoth runs compare.Run on the files twice: from the open files (runs in
// increasing query order are then scored as they are read) and from plain
// readers (read whole). It returns each one's JSON report and per-query lines,
// or its error.
func runBoth(t *testing.T, dir string, runs []string, o compare.Options, clusters bool) (streamed, whole string) {
	t.Helper()
	return runBothOn(t, dir, "qrels.trec", runs, o, clusters)
}

// runBothOn is runBoth with the qrels file named.
func runBothOn(t *testing.T, dir, qrels string, runs []string, o compare.Options, clusters bool) (streamed, whole string) {
	t.Helper()
	one := func(plain bool) string {
		open := func(name string) io.Reader {
			f, err := os.Open(filepath.Join(dir, name))
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			if plain {
				return plainReader{f}
			}
			return f
		}
		in := compare.In{Qrels: compare.Reader{Name: qrels, R: open(qrels)}}
		for _, r := range runs {
			in.Runs = append(in.Runs, compare.RunReader{Strategy: strings.TrimSuffix(r, ".trec"), Reader: compare.Reader{Name: r, R: open(r)}})
		}
		if clusters {
			in.Clusters = compare.Reader{Name: "clusters.tsv", R: open("clusters.tsv")}
		}
		if _, err := os.Stat(filepath.Join(dir, "queries.jsonl")); err == nil {
			in.Queries = compare.Reader{Name: "queries.jsonl", R: open("queries.jsonl")}
		}
		res, err := compare.Run(context.Background(), in, o)
		if err != nil {
			return "error: " + err.Error()
		}
		var b bytes.Buffer
		require.NoError(t, comparereport.New(res).WriteJSON(&b))
		require.NoError(t, comparereport.PerQuery(&b, res))
		return b.String()
	}
	return one(false), one(true)
}

// TestRunStreamedAsWhole: runs sorted by query id, scored as they are read,
// give byte for byte the reports of the runs read whole, with every option
// that changes what is kept per query (--judged-only's condensed lists and
// judged@k, --clusters, a cutoff, binary qrels); and a run out of order, or
// bad input anywhere, gives what reading whole gives, errors included.
func TestRunStreamedAsWhole(t *testing.T) {
	var qrels, a, b, same, shuffled, clusters strings.Builder
	for i := range 40 {
		id := fmt.Sprintf("q%02d", i)
		if i%7 != 3 { // q03, q10, ...: not judged
			for d := range 6 {
				fmt.Fprintf(&qrels, "%s 0 d%d %d\n", id, (i+d)%9, (i*d+i)%4-(d/5))
			}
		}
		fmt.Fprintf(&clusters, "%s c%d\n", id, i/4)
		if i%11 == 5 {
			continue // q05, q16, ...: absent from the runs
		}
		for r := range 12 {
			fmt.Fprintf(&a, "%s Q0 d%d %d %g a\n", id, (i*r+1)%13, r+1, float64(20-r)/4)
			fmt.Fprintf(&b, "%s Q0 d%d %d %g b\n", id, (i+r*5)%11, r+1, float64((r*7)%5))
			fmt.Fprintf(&same, "%s Q0 d%d %d %g s\n", id, (i*r+1)%13, r+1, float64(20-r)/4)
		}
	}
	for i := 39; i >= 0; i-- { // the same lines as a, the queries in reverse order
		prefix := fmt.Sprintf("q%02d ", i)
		for _, line := range strings.SplitAfter(a.String(), "\n") {
			if strings.HasPrefix(line, prefix) {
				shuffled.WriteString(line)
			}
		}
	}
	binary := strings.NewReplacer(" 2\n", " 1\n", " 3\n", " 1\n").Replace(qrels.String())
	files := map[string]string{"qrels.trec": qrels.String(), "a.trec": a.String(), "b.trec": b.String(), "same.trec": same.String(),
		"shuffled.trec": shuffled.String(), "clusters.tsv": clusters.String(), "bad.trec": a.String() + "q99 Q0 d1 1 x t\n",
		"other.trec": "z1 Q0 d1 1 1 t\n", "empty.trec": "\n\n", "qrels-binary.trec": binary}
	dir := streamFiles(t, files)
	o := opts()
	o.Resamples = 200
	judgedOnly := o
	judgedOnly.JudgedOnly = true
	k3 := o
	k3.K = 3
	gate := o
	gate.Gate.Strategy = "b"
	gate.Gate.FailIfBeaten = true
	missing := o
	missing.Baseline = "nope"
	for _, tc := range []struct {
		name     string
		runs     []string
		o        compare.Options
		clusters bool
		err      string // "" none: a report
	}{
		{"two runs", []string{"a.trec", "b.trec"}, o, false, ""},
		{"identical runs", []string{"a.trec", "same.trec", "b.trec"}, o, false, ""},
		{"judged only", []string{"a.trec", "b.trec", "same.trec"}, judgedOnly, false, ""},
		{"k 3", []string{"b.trec", "a.trec"}, k3, false, ""},
		{"clusters", []string{"a.trec", "b.trec"}, o, true, ""},
		{"gate", []string{"a.trec", "b.trec"}, gate, false, ""},
		{"one run", []string{"b.trec"}, o, false, ""},
		{"out of order", []string{"a.trec", "shuffled.trec"}, o, false, ""},
		{"bad line", []string{"a.trec", "bad.trec"}, o, false, `failed to read run "bad": bad.trec:433: score "x" is not a finite decimal number`},
		{"empty run", []string{"empty.trec", "b.trec"}, o, false, `failed to read run "empty": empty.trec: empty run`},
		{"no query in common", []string{"a.trec", "other.trec"}, o, false, `failed to compare: other.trec: run "other" has no query in common with the qrels qrels.trec`},
		{"baseline missing", []string{"a.trec", "b.trec"}, missing, false, `failed to compare: baseline "nope" is not one of the runs`},
		{"same name twice", []string{"a.trec", "a.trec"}, o, false, `failed to compare: duplicate strategy name "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streamed, whole := runBoth(t, dir, tc.runs, tc.o, tc.clusters)
			assert.Equal(t, whole, streamed)
			if tc.err != "" {
				assert.Equal(t, "error: "+tc.err, streamed)
			} else {
				assert.NotContains(t, streamed, "error: ")
			}
		})
	}
	// --queries with cluster keys (the queries' texts and their clustering).
	var queries strings.Builder
	for i := range 40 {
		fmt.Fprintf(&queries, `{"id":"q%02d","query":"question %d","cluster":"f%d"}`+"\n", i, i, i/3)
	}
	qdir := streamFiles(t, map[string]string{"qrels.trec": qrels.String(), "a.trec": a.String(), "b.trec": b.String(), "queries.jsonl": queries.String()})
	streamed, whole := runBoth(t, qdir, []string{"a.trec", "b.trec"}, o, false)
	assert.Equal(t, whole, streamed)
	assert.Contains(t, streamed, "question 7")
	// Binary qrels under the default level (relevant from level 1).
	bdir := streamFiles(t, map[string]string{"qrels.trec": binary, "a.trec": a.String(), "b.trec": b.String()})
	streamed, whole = runBoth(t, bdir, []string{"a.trec", "b.trec"}, o, false)
	assert.Equal(t, whole, streamed)
	assert.Contains(t, streamed, `"relevant_level": 1`)
}

// TestRunStreamedAsWholeOracle: the files checked against NIST trec_eval
// (testdata/oracle: dev300's run, sorted by query id; its qrels and the wide
// ones, with negative labels), the run and a second one ranking each query's
// documents the other way round, streamed and whole: the same reports, with
// the options the oracle tests check.
func TestRunStreamedAsWholeOracle(t *testing.T) {
	dir := t.TempDir()
	cp := func(from, to string) string {
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, to), b, 0o644))
		return string(b)
	}
	run := cp(filepath.Join("testdata", "oracle", "dev300.run"), "dev.trec")
	cp(filepath.Join("testdata", "oracle", "dev300.qrels"), "dev.qrels")
	cp(filepath.Join("testdata", "oracle-wide", "wide300.qrels"), "wide.qrels")
	var rev strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(run), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 6)
		fmt.Fprintf(&rev, "%s Q0 %s %s -%s rev\n", f[0], f[2], f[3], strings.TrimPrefix(f[4], "-"))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rev.trec"), []byte(rev.String()), 0o644))
	base := opts()
	base.Resamples = 200
	judgedOnly := base
	judgedOnly.JudgedOnly = true
	linear := base
	linear.Gain = metrics.GainLinear
	linear.RelevantLevel = 1
	linear.RelevantLevelSet = true
	k20 := judgedOnly
	k20.K = 20
	for _, qrels := range []string{"dev.qrels", "wide.qrels"} {
		for name, o := range map[string]compare.Options{"default": base, "judged only": judgedOnly, "linear, level 1": linear, "judged only, k 20": k20} {
			t.Run(qrels+", "+name, func(t *testing.T) {
				streamed, whole := runBothOn(t, dir, qrels, []string{"dev.trec", "rev.trec"}, o, false)
				assert.Equal(t, whole, streamed)
				assert.NotContains(t, streamed, "error: ")
			})
		}
	}
}
