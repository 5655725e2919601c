package importer

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// fuzzFormat fuzzes one converter: it never panics; every error is an *Error
// naming the input and a line the input has (or 0, the whole file); every output
// it accepts is read back by the project's parsers, has one line per record
// counted, clamps no more records than it wrote, and is what the converter
// writes again for the same input (and what detection writes when it picks the
// same format). check, when set, compares the result with a reference reading
// of the input kept in the test.
func fuzzFormat(f *testing.F, name string, seeds ...string) {
	fuzzFormatWith(f, name, nil, seeds...)
}

// refCheck compares Convert's result (the output, or the error) with a reading
// of in made apart from the converter.
type refCheck func(t *testing.T, in, out []byte, st Stats, err error)

func fuzzFormatWith(f *testing.F, name string, check refCheck, seeds ...string) {
	format, ok := Lookup(name)
	if !ok {
		f.Fatalf("no format %q", name)
	}
	for _, s := range seeds {
		if strings.HasPrefix(s, "@") {
			b, err := os.ReadFile(filepath.Join(formatsDir, s[1:]))
			if err != nil {
				f.Fatal(err)
			}
			s = string(b)
		}
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		opt := Options{ParentSep: "#", LineAt: LineAt(bytes.NewReader(in))}
		_, st, err := Convert(context.Background(), bytes.NewReader(in), "in", &out, format, opt)
		if check != nil {
			check(t, in, out.Bytes(), st, err)
		}
		if err != nil {
			var ie *Error
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an input error: %T %v", err, err)
			}
			if ie.File != "in" || ie.Line < 0 || ie.Line > bytes.Count(in, []byte{'\n'})+1 || ie.Msg == "" {
				t.Fatalf("error %q names no place of the input (file %q, line %d of %d)", err, ie.File, ie.Line, bytes.Count(in, []byte{'\n'})+1)
			}
			return
		}
		checkOutput(t, format.Kind, out.Bytes())
		if n := bytes.Count(out.Bytes(), []byte{'\n'}); n != st.Records || (n > 0 && !bytes.HasSuffix(out.Bytes(), []byte{'\n'})) {
			t.Fatalf("%d records counted, %d lines written:\n%s", st.Records, n, out.Bytes())
		}
		if st.ClampedLow+st.ClampedHigh > st.Records || st.ClampedLow < 0 || st.ClampedHigh < 0 {
			t.Fatalf("stats %+v", st)
		}
		var again bytes.Buffer
		_, st2, err := Convert(context.Background(), bytes.NewReader(in), "in", &again, format, opt)
		if err != nil || st2 != st || !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Fatalf("a second conversion differs: %v %+v %+v", err, st, st2)
		}
		if detected, _ := Detect(in); detected == format {
			again.Reset()
			if _, st2, err = Convert(context.Background(), bytes.NewReader(in), "in", &again, nil, opt); err != nil || st2 != st || !bytes.Equal(again.Bytes(), out.Bytes()) {
				t.Fatalf("the detected format converts differently: %v", err)
			}
		}
	})
}

// rawLines splits in as every line format reads it: at '\n', a trailing '\r'
// dropped, a UTF-8 BOM dropped from the first line.
func rawLines(in []byte) [][]byte {
	lines := bytes.Split(in, []byte{'\n'})
	for i, line := range lines {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if i == 0 {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		lines[i] = line
	}
	return lines
}

// refLines is rawLines with each line cut into fields at runs of ASCII blanks.
func refLines(in []byte) [][][]byte {
	var out [][][]byte
	for _, line := range rawLines(in) {
		out = append(out, bytes.FieldsFunc(line, func(r rune) bool { return r < 0x80 && strings.ContainsRune(" \t\r\n\v\f", r) }))
	}
	return out
}

// refQrels is the trec-qrels (and msmarco-qrels) format read apart: it returns
// the judgments (query, document, relevance clamped to -128..127) or the first
// line it refuses. check then requires the converter to refuse that same line,
// or the qrels compare reads from its output to hold exactly those judgments.
func refQrels(t *testing.T, in, out []byte, st Stats, err error) {
	checkQrels(t, refLines(in), func(f [][]byte) (q, d, rel []byte, ok bool) {
		if len(f) != 4 || f[0][0] == '{' {
			return nil, nil, nil, false
		}
		return f[0], f[2], f[3], true
	}, out, st, err)
}

// refBEIRQrels is the beir-qrels format read apart: a header line of the
// tab-separated columns query-id, corpus-id, score, then lines of three
// tab-separated columns (white space around each ignored), the ids non-empty
// without white space (the query id not starting with '{'), the score an integer
// (clamped to -128..127). The judgments are checked as refQrels checks them.
func refBEIRQrels(t *testing.T, in, out []byte, st Stats, err error) {
	var lines [][][]byte
	header := false
	for _, line := range rawLines(in) {
		if len(bytes.TrimSpace(line)) == 0 {
			lines = append(lines, nil)
			continue
		}
		cols := bytes.Split(line, []byte{'\t'})
		for j := range cols {
			cols[j] = bytes.TrimSpace(cols[j])
		}
		if !header {
			header = true
			if len(cols) != 3 || string(cols[0]) != "query-id" || string(cols[1]) != "corpus-id" || string(cols[2]) != "score" {
				lines = append(lines, [][]byte{nil}) // refused: no header
				continue
			}
			lines = append(lines, nil)
			continue
		}
		lines = append(lines, cols)
	}
	blank := func(b []byte) bool { return len(b) == 0 || bytes.ContainsAny(b, " \t\r\n\v\f") }
	checkQrels(t, lines, func(f [][]byte) (q, d, rel []byte, ok bool) {
		if len(f) != 3 || blank(f[0]) || blank(f[1]) || f[0][0] == '{' {
			return nil, nil, nil, false
		}
		return f[0], f[1], f[2], true
	}, out, st, err)
}

// checkQrels reads the judgments of lines (each cut into fields; an empty line
// skipped) with judgment, which says whether a line is one; it requires the
// converter to refuse the first line that is not (or whose relevance is not an
// int64, or that judges a document twice), or the qrels compare reads from its
// output to hold exactly the judgments, relevances clamped to -128..127.
func checkQrels(t *testing.T, lines [][][]byte, judgment func([][]byte) (q, d, rel []byte, ok bool), out []byte, st Stats, err error) {
	type pair struct{ q, d string }
	want := map[pair]int{}
	queries := map[string]bool{}
	var clamped int
	bad := 0
	for i, f := range lines {
		if len(f) == 0 {
			continue
		}
		q, d, r, ok := judgment(f)
		if !ok {
			bad = i + 1
			break
		}
		rel, perr := strconv.ParseInt(string(r), 10, 64)
		k := pair{string(q), string(d)}
		if _, dup := want[k]; perr != nil || dup {
			bad = i + 1
			break
		}
		if rel < -128 || rel > 127 {
			clamped++
			rel = min(max(rel, -128), 127)
		}
		want[k] = int(rel)
		queries[k.q] = true
	}
	if bad == 0 && len(want) == 0 {
		require.Error(t, err, "no judgment in the input")
		return
	}
	if bad > 0 {
		var ie *Error
		require.ErrorAs(t, err, &ie, "line %d is not a judgment", bad)
		require.Equal(t, bad, ie.Line, "the line refused: %v", err)
		return
	}
	require.NoError(t, err)
	require.Equal(t, len(want), st.Records)
	require.Equal(t, clamped, st.ClampedLow+st.ClampedHigh)
	q, err := trecfile.ParseQrels(context.Background(), bytes.NewReader(out), "out")
	require.NoError(t, err)
	require.Equal(t, len(queries), q.NumQueries())
	for k, rel := range want {
		i, ok := q.QueryIndex(k.q)
		require.True(t, ok, "query %q", k.q)
		got, ok := q.Relevance(i, k.d)
		require.True(t, ok, "document %q of query %q", k.d, k.q)
		require.Equal(t, rel, got, "document %q of query %q", k.d, k.q)
	}
}

func FuzzBEIRQrels(f *testing.F) {
	fuzzFormatWith(f, "beir-qrels", refBEIRQrels, "@beir-qrels.tsv", "query-id\tcorpus-id\tscore\nq\td\t-7\n")
}

func FuzzTRECQrels(f *testing.F) {
	fuzzFormatWith(f, "trec-qrels", refQrels, "@trec-qrels-graded.txt", "@msmarco-qrels.tsv", "q 0 d 99999999999999999999\n")
}

func FuzzMSMARCORun(f *testing.F) {
	fuzzFormatWith(f, "msmarco-run", refMSMARCORun, "@msmarco-run.tsv", "1 2 3\n1 2 3\n")
}

func FuzzIRDSQrels(f *testing.F) {
	fuzzFormatWith(f, "irds-qrels", refIRDSQrels, "@irds-qrels.jsonl", `{"query_id": "q", "doc_id": 1e3, "relevance": 2.0}`+"\n"+`{"query_id": "q", "doc_id": "1e3", "relevance": -1e2}`, `{"query_id": 1, "doc_id": "a b", "relevance": 1}`, `{"query_id": "q", "doc_id": "d", "relevance": 1.5}`)
}

func FuzzIRDSScoredDocs(f *testing.F) {
	fuzzFormat(f, "irds-scoreddocs", "@irds-scoreddocs.jsonl", `{"query_id": "1", "doc_id": "2", "score": 1e999}`)
}

func FuzzIRDSDocs(f *testing.F) {
	fuzzFormat(f, "irds-docs", "@irds-docs.jsonl", `{"doc_id": "1", "text": null}`)
}

func FuzzRagas(f *testing.F) {
	fuzzFormat(f, "ragas", "@ragas.jsonl", "@ragas.json", `[{"user_input": "q", "retrieved_context_ids": ["#"]}]`)
}

func FuzzPromptfoo(f *testing.F) {
	fuzzFormat(f, "promptfoo", "@promptfoo-results.json", `{"results": [{"testIdx": 1, "vars": {"query": "q"}, "response": {"output": "[1]"}}]}`)
}

func FuzzCSV(f *testing.F) {
	fuzzFormat(f, "csv", "@retrieved-gold.csv", "query,retrieved\n\"q\",\"[\"\"a\"\"]\"\n")
}

// Detect never panics, says why when it detects nothing, and does not depend on
// what every converter reads past: a UTF-8 BOM before the input, and CR LF line
// ends for LF (a file saved on Windows is the same input).
func FuzzDetect(f *testing.F) {
	entries, err := os.ReadDir(formatsDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(formatsDir, e.Name())); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		format, why := Detect(in)
		if format == nil && why == "" {
			t.Fatal("no format and no reason")
		}
		if len(in) >= peekSize/2 {
			return
		}
		name := func(f *Format) string {
			if f == nil {
				return "none"
			}
			return f.Name
		}
		if !bytes.HasPrefix(in, []byte("\xEF\xBB\xBF")) {
			if g, _ := Detect(append([]byte("\xEF\xBB\xBF"), in...)); g != format {
				t.Fatalf("%q is %s, with a BOM %s", in, name(format), name(g))
			}
		}
		if !bytes.ContainsRune(in, '\r') {
			if g, _ := Detect(bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))); g != format {
				t.Fatalf("%q is %s, with CR LF %s", in, name(format), name(g))
			}
		}
	})
}

// refMSMARCORun is the msmarco-run format read apart: "qid docid rank" lines, a
// rank from 1 to 2^31-1 (rank 1 best). check then requires the converter to
// refuse the first line the reference refuses, or the run compare reads from
// its output to rank each query's documents as the ranks do (a document listed
// twice at its best rank, equal ranks by docid descending, trec_eval's order),
// its top 100.
func refMSMARCORun(t *testing.T, in, out []byte, st Stats, err error) {
	best := map[string]map[string]int64{}
	records := 0
	bad := 0
	for i, f := range refLines(in) {
		if len(f) == 0 {
			continue
		}
		var rank int64
		var perr error
		if len(f) == 3 && f[0][0] != '{' {
			rank, perr = strconv.ParseInt(string(f[2]), 10, 64)
		}
		if len(f) != 3 || f[0][0] == '{' || perr != nil || rank < 1 || rank > math.MaxInt32 {
			bad = i + 1
			break
		}
		q, d := string(f[0]), string(f[1])
		if best[q] == nil {
			best[q] = map[string]int64{}
		}
		if r, ok := best[q][d]; !ok || rank < r {
			best[q][d] = rank
		}
		records++
	}
	if bad > 0 {
		var ie *Error
		require.ErrorAs(t, err, &ie, "line %d is not a run line", bad)
		require.Equal(t, bad, ie.Line, "the line refused: %v", err)
		return
	}
	if records == 0 {
		require.Error(t, err, "no run line in the input")
		return
	}
	require.NoError(t, err)
	require.Equal(t, records, st.Records)
	want := map[string][]string{}
	for q, docs := range best {
		ids := make([]string, 0, len(docs))
		for d := range docs {
			ids = append(ids, d)
		}
		slices.SortFunc(ids, func(a, b string) int {
			if docs[a] != docs[b] {
				return cmp.Compare(docs[a], docs[b])
			}
			return strings.Compare(b, a)
		})
		want[q] = ids[:min(len(ids), 100)]
	}
	run, err := trecfile.ParseTRECRun(context.Background(), bytes.NewReader(out), "out", 100)
	require.NoError(t, err)
	got := map[string][]string{}
	for _, q := range run.Queries {
		got[q.ID] = q.Docs
	}
	require.Equal(t, want, got)
}

// refIRDSQrels is the irds-qrels format read apart with encoding/json (a
// map, keys exactly as written): one object per non-blank line, query_id and
// doc_id strings or numbers (their text) that are TREC ids, relevance a number
// of integer value within int64. A line with a repeated key, or any other, is
// one the converter refuses (a refusal of a line the reference takes fails).
func refIRDSQrels(t *testing.T, in, out []byte, st Stats, err error) {
	id := func(v any) ([]byte, bool) {
		switch v := v.(type) {
		case string:
			return []byte(v), v != "" && !strings.ContainsAny(v, " \t\r\n\v\f")
		case json.Number:
			return []byte(v.String()), true
		}
		return nil, false
	}
	var lines [][][]byte
	for _, line := range rawLines(in) {
		if len(bytes.TrimSpace(line)) == 0 {
			lines = append(lines, nil)
			continue
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var o map[string]any
		derr := d.Decode(&o)
		_, dup := jsontest.RepeatedKey(line)
		if _, terr := d.Token(); derr != nil || terr != io.EOF || o == nil || dup {
			lines = append(lines, [][]byte{nil})
			continue
		}
		q, okq := id(o["query_id"])
		doc, okd := id(o["doc_id"])
		rel, okr := o["relevance"].(json.Number)
		r, perr := strconv.ParseInt(rel.String(), 10, 64)
		if okr && perr != nil {
			// A number of integer value in another spelling (2.0, -1e2).
			f, ferr := strconv.ParseFloat(rel.String(), 64)
			if ferr == nil && f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
				r, perr = int64(f), nil
			}
		}
		if !okq || !okd || !okr || perr != nil || q[0] == '{' {
			lines = append(lines, [][]byte{nil})
			continue
		}
		lines = append(lines, [][]byte{q, doc, []byte(strconv.FormatInt(r, 10))})
	}
	checkQrels(t, lines, func(f [][]byte) (q, d, rel []byte, ok bool) {
		if len(f) != 3 {
			return nil, nil, nil, false
		}
		return f[0], f[1], f[2], true
	}, out, st, err)
}
