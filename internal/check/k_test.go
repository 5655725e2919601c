package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// onlyReader hides the *os.File of a reader (a pipe, as peekRunK sees it).
type onlyReader struct{ io.Reader }

// replayed is what peekRunK replays of a pipe's content: the blank lines
// before the first other line (input.IsBlank, after a BOM on line 1) as one
// newline each, the rest as it is.
func replayed(in string) string {
	out := ""
	for line := 1; ; line++ {
		nl := strings.IndexByte(in, '\n')
		if nl < 0 {
			return out + in
		}
		text := in[:nl]
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if !input.IsBlank([]byte(text)) {
			return out + in
		}
		out, in = out+"\n", in[nl+1:]
	}
}

// casesOf is what the case scanner reads of in: each case's id and line, and
// its error.
func casesOf(in string) string {
	var b strings.Builder
	err := casefile.StreamCases(context.Background(), strings.NewReader(in), "c.jsonl", func(c *casefile.Case) error {
		fmt.Fprintf(&b, "%s@%d ", c.ID, c.Line)
		return nil
	})
	fmt.Fprintf(&b, "%v", err)
	return b.String()
}

func TestPeekRunK(t *testing.T) {
	long := `{"id":"a","query":"` + strings.Repeat("x", 200<<10) + `","retrieval":{"k":7}}` + "\n"
	for _, c := range []struct {
		name, in string
		k, line  int
	}{
		{"retrieve's case", `{"id": "a", "retrieval": {"strategy": "dense", "store": "memory", "embedder": "hash", "k": 2}}` + "\n" + `{"id":"b","retrieval":{"k":9}}` + "\n", 2, 1},
		{"after blank lines and a BOM", "\ufeff\n  \r\n" + `{"id":"a","retrieval":{"k":10}}`, 10, 3},
		{"a line longer than the buffer", long, 7, 1},
		{"no retrieval", `{"id":"a"}` + "\n" + `{"id":"b","retrieval":{"k":3}}` + "\n", 0, 1},
		{"k not a positive integer", `{"id":"a","retrieval":{"k":0}}`, 0, 1},
		{"k a string", `{"id":"a","retrieval":{"k":"5"}}`, 0, 1},
		{"k fractional", `{"id":"a","retrieval":{"k":2.5}}`, 0, 1},
		{"retrieval not an object", `{"id":"a","retrieval":5}`, 0, 1},
		{"bad JSON: the scanner reports it", `{"id":`, 0, 1},
		{"empty", "", 0, 0},
		{"blank only", "\n\n", 0, 0},
		{"blank lines with spaces, tabs and CRs, then a case", "\ufeff \t\r\n\r\n\n" + `{"id":"a","retrieval":{"k":4}}` + "\n \n", 4, 4},
		{"a blank line after a line the scanner does not skip", "\v\n\n" + `{"id":"a","retrieval":{"k":2}}`, 2, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A pipe: peeked, then replayed byte for byte.
			k, line, rd, err := peekRunK(context.Background(), onlyReader{strings.NewReader(c.in)})
			require.NoError(t, err)
			assert.Equal(t, c.k, k)
			assert.Equal(t, c.line, line)
			all, err := io.ReadAll(rd)
			require.NoError(t, err)
			assert.Equal(t, replayed(c.in), string(all), "the stream is replayed whole, its leading blank lines as newlines")
			assert.Equal(t, casesOf(c.in), casesOf(string(all)), "the same cases at the same lines")

			// A regular file: read at its offsets, returned as it is.
			path := filepath.Join(t.TempDir(), "cases.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(c.in), 0o644))
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			k, line, rd, err = peekRunK(context.Background(), f)
			require.NoError(t, err)
			assert.Equal(t, c.k, k)
			assert.Equal(t, c.line, line)
			assert.Same(t, f, rd.(*os.File))
			all, err = io.ReadAll(rd)
			require.NoError(t, err)
			assert.Equal(t, c.in, string(all))
		})
	}
}

func TestResolveK(t *testing.T) {
	run := `{"id":"a","retrieval":{"k":2}}` + "\n"
	for _, c := range []struct {
		name        string
		cases       string
		flag, baseK int // baseK: the baseline header's k (-1: no baseline)
		want        KChoice
		differs     bool
	}{
		{"--k wins", run, 3, 5, KChoice{K: 3, From: KFromFlag, RunK: 2, RunKFile: "c.jsonl", RunKLine: 1, BaselineK: 5}, true},
		{"--k equal to the run's", run, 2, -1, KChoice{K: 2, From: KFromFlag, RunK: 2, RunKFile: "c.jsonl", RunKLine: 1}, false},
		{"the baseline's before the run's", run, 0, 5, KChoice{K: 5, From: KFromBaseline, RunK: 2, RunKFile: "c.jsonl", RunKLine: 1, BaselineK: 5}, true},
		{"a baseline without k: the run's", run, 0, 0, KChoice{K: 2, From: KFromRun, RunK: 2, RunKFile: "c.jsonl", RunKLine: 1}, false},
		{"the run's", run, 0, -1, KChoice{K: 2, From: KFromRun, RunK: 2, RunKFile: "c.jsonl", RunKLine: 1}, false},
		{"the default", `{"id":"a"}`, 0, -1, KChoice{K: DefaultK, From: KFromDefault}, false},
	} {
		for _, pipe := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, pipe %v", c.name, pipe), func(t *testing.T) {
				in := In{Cases: onlyReader{strings.NewReader(c.cases)}, CasesName: "c.jsonl"}
				var base []byte
				if c.baseK >= 0 {
					var b bytes.Buffer
					require.NoError(t, baseline.WriteFile(&b, &baseline.Header{K: c.baseK, Cases: 1}, strings.NewReader("")))
					base = b.Bytes()
					in.BaselineName = "base.jsonl.gz"
					if pipe {
						in.Baseline = onlyReader{bytes.NewReader(base)}
					} else {
						path := filepath.Join(t.TempDir(), "base.jsonl.gz")
						require.NoError(t, os.WriteFile(path, base, 0o600))
						f, err := os.Open(path)
						require.NoError(t, err)
						defer f.Close()
						in.Baseline = f
					}
				}
				got, err := ResolveK(context.Background(), &in, c.flag)
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				assert.Equal(t, c.differs, checkreport.KChoiceWarning(got.K, got.From, got.RunK, got.RunKFile, got.RunKLine) != "", "a warning exactly when the run's k differs")
				all, err := io.ReadAll(in.Cases)
				require.NoError(t, err)
				assert.Equal(t, c.cases, string(all), "the cases are read whole after the peek")
				if base != nil {
					all, err := io.ReadAll(in.Baseline)
					require.NoError(t, err)
					assert.Equal(t, base, all, "the baseline is read whole after the peek")
				}
			})
		}
	}

	// A baseline the peek cannot read gives no k; the load reports it.
	in := In{Cases: strings.NewReader(run), CasesName: "c.jsonl", Baseline: onlyReader{strings.NewReader("not gzip, not JSON")}, BaselineName: "b"}
	got, err := ResolveK(context.Background(), &in, 0)
	require.NoError(t, err)
	assert.Equal(t, KFromRun, got.From)
	all, err := io.ReadAll(in.Baseline)
	require.NoError(t, err)
	assert.Equal(t, "not gzip, not JSON", string(all))

	// Run takes the k it is given and refuses none.
	_, err = Run(context.Background(), In{Cases: strings.NewReader(run), CasesName: "c.jsonl"}, Options{})
	require.ErrorContains(t, err, "not resolved")
}

func FuzzPeekRunK(f *testing.F) {
	f.Add([]byte(`{"id":"a","retrieval":{"k":2}}` + "\n{}\n"))
	f.Add([]byte("\ufeff\n\n{\"retrieval\":{\"k\":1e3}}"))
	f.Add([]byte(`{"retrieval":{"k":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, line, rd, err := peekRunK(context.Background(), onlyReader{strings.NewReader(string(data))})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, k, 0)
		assert.GreaterOrEqual(t, line, 0)
		all, err := io.ReadAll(rd)
		require.NoError(t, err)
		assert.Equal(t, replayed(string(data)), string(all))
		assert.Equal(t, casesOf(string(data)), casesOf(string(all)), "the same cases at the same lines")
	})
}

// TestPeekRunKBlankLines: the blank lines before the first case of a pipe are
// counted, not held (they were kept to be replayed: a gigabyte of newlines
// held a gigabyte).
func TestPeekRunKBlankLines(t *testing.T) {
	const n = 64 << 20
	in := io.MultiReader(&newlines{n: n}, strings.NewReader(`{"id":"a","retrieval":{"k":3}}`+"\n"))
	var rd io.Reader
	var k, line int
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	k, line, rd, err = peekRunK(context.Background(), onlyReader{in})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, 3, k)
	assert.Equal(t, n+1, line)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated by the peek")
	assert.Equal(t, "a@"+fmt.Sprint(n+1)+" <nil>", casesOf2(t, rd))
}

// casesOf2 is casesOf of a reader.
func casesOf2(t *testing.T, r io.Reader) string {
	var b strings.Builder
	err := casefile.StreamCases(context.Background(), r, "c.jsonl", func(c *casefile.Case) error {
		fmt.Fprintf(&b, "%s@%d ", c.ID, c.Line)
		return nil
	})
	fmt.Fprintf(&b, "%v", err)
	return b.String()
}

// The warning's words (checkreport.KChoiceWarning) follow the sources of k
// this package names.
func TestKChoiceWarningSources(t *testing.T) {
	w := func(from string) string { return checkreport.KChoiceWarning(3, from, 2, "c.jsonl", 1) }
	assert.True(t, strings.HasPrefix(w(KFromFlag), "--k 3 differs"))
	assert.Contains(t, w(KFromBaseline), "the baseline's k = 3")
	assert.Contains(t, w(KFromRun), "differs from the k = 3 used")
	assert.Contains(t, w(KFromDefault), "differs from the k = 3 used")
}

// BenchmarkResolveKBaseline is the k's resolution against a baseline file:
// its header read through the gzip reader (and the buffer baseline.Open
// fills), the rest of the file untouched. The body here is 4 MiB of case lines
// compressed; the header carries a check document of the size a 1M-case run
// writes.
func BenchmarkResolveKBaseline(b *testing.B) {
	dir := b.TempDir()
	var body bytes.Buffer
	gz := gzip.NewWriter(&body)
	for i := 0; body.Len() < 4<<20; i++ {
		fmt.Fprintf(gz, `{"id": "case-%d", "line": %d, "locale": "en", "type": "golden", "query": "q %d", "gold": ["card-%d"], "scores": {"retrieval_hit_at_k": 1}, "rank": 1, "top": ["card-%d", "card-%d"]}`+"\n", i, i+1, i, i%3000, i%3000, (i+7)%3000)
		if i%1000 == 0 {
			require.NoError(b, gz.Flush())
		}
	}
	require.NoError(b, gz.Close())
	agg := `{"schema": "retrieval-gate/aggregates@1", "k": 5, "pad": "` + strings.Repeat("x", 8<<10) + `"}`
	path := filepath.Join(dir, "base.jsonl.gz")
	f, err := os.Create(path)
	require.NoError(b, err)
	require.NoError(b, baseline.WriteFile(f, &baseline.Header{Aggregates: []byte(agg), K: 5, Cases: 1}, &body))
	require.NoError(b, f.Close())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		in := In{Cases: strings.NewReader(`{"id":"a"}` + "\n"), CasesName: "c", Baseline: f, BaselineName: "b"}
		kc, err := ResolveK(context.Background(), &in, 0)
		if err != nil || kc.From != KFromBaseline {
			b.Fatal(err, kc)
		}
		f.Close()
	}
}

// TestRetrievalKWalk: the first line's k read by walking the line, as a tree's
// lookup of retrieval.k would (the first such member; escaped keys unescaped),
// and 0 for a line that is not valid JSON.
func TestRetrievalKWalk(t *testing.T) {
	for _, c := range []struct {
		in string
		k  int
	}{
		{`{"retrieval":{"k":3}}`, 3},
		{` {"a":[{"retrieval":{"k":9}}],"b":{"k":8},"retrieval":{"x":{"k":7},"k":4}} `, 4},
		{`{"retri\u0065val":{"\u006b":5}}`, 5},
		{`{"retrieval":{"k":5},"retrieval":{"k":6}}`, 0}, // a repeated key: the case scanner refuses the line
		{`{"retrieval":{"k":5,"k":6}}`, 0},
		{`{"retrieval":{"k":5}} x`, 0},
		{`{"retrieval":{"k":5},"q":"\x01"}`, 0},
		{`{"retrieval":{"k":-2}}`, 0},
		{`{"retrieval":{"k":1e2}}`, 0},
		{`{"retrieval":{"k":null}}`, 0},
		{`{"retrieval":[{"k":2}]}`, 0},
		{`[{"retrieval":{"k":2}}]`, 0},
		{`{"retrieval":{}}`, 0},
		{`{}`, 0},
	} {
		assert.Equal(t, c.k, retrievalK([]byte(c.in)), c.in)
	}
}

// TestRetrievalKMemory: the peek of a long first line takes no memory beyond
// its bytes (a tree of it took about 240 bytes per value: 3.4 GB for a 14 MiB
// line of zeros).
func TestRetrievalKMemory(t *testing.T) {
	line := []byte(`{"id":"a","x":[` + strings.Repeat("0,", 2<<20) + `0],"retrieval":{"k":6}}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	k := retrievalK(line)
	runtime.ReadMemStats(&after)
	assert.Equal(t, 6, k)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by the peek of a 4 MiB line")
}

// refRetrievalK is retrievalK by another road: the line checked by
// jsonpos (the one JSON language of the inputs), then decoded by encoding/json.
func refRetrievalK(line []byte) int {
	var s jsonpos.Scanner
	if s.Check(line) != nil {
		return 0
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		return 0
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(top["retrieval"], &r) != nil {
		return 0
	}
	raw := r["k"]
	if len(raw) == 0 || jsonpos.TypeName(raw[0]) != "number" {
		return 0
	}
	k, ok := casefile.RetrievalK(raw)
	if !ok {
		return 0
	}
	return k
}

// FuzzRetrievalK holds the walk of the first line to the tree-free reference.
func FuzzRetrievalK(f *testing.F) {
	for _, s := range []string{`{"retrieval":{"k":3}}`, `{"a":[{"retrieval":{"k":9}}],"retrieval":{"x":{"k":7},"k":4}}`,
		`{"retri\u0065val":{"\u006b":5}}`, `{"retrieval":{"k":5},"retrieval":{"k":6}}`, `{"retrieval":null}`, `[1]`, `{"retrieval":{"k":12345678901234567890}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		assert.Equal(t, refRetrievalK(line), retrievalK(line), "%q", line)
	})
}
