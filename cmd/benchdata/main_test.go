package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

func gen(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(args, &out, &errOut), errOut.String())
	return out.Bytes()
}

// The cases are the check benchmark's (the same bytes as internal/cli's
// benchFiles writes), valid cases, and the same bytes on every run.
func TestCheckCases(t *testing.T) {
	a := gen(t, "check-cases", "200")
	require.Equal(t, a, gen(t, "check-cases", "200"), "deterministic")
	// The first 200 lines of internal/cli's benchmark file (its generator
	// wrote them; the whole 1M-case files were compared with cmp).
	assert.Equal(t, "e3098e3ed5fec545057e16318aad9fca51b0d9128cdfd0a72f52ee49f19f2e7c", fmt.Sprintf("%x", sha256.Sum256(a)))
	n := 0
	require.NoError(t, casefile.StreamCases(context.Background(), bytes.NewReader(a), "cases.jsonl", func(c *casefile.Case) error {
		n++
		assert.Len(t, c.Retrieved, 10)
		return nil
	}))
	assert.Equal(t, 200, n)
	kb := gen(t, "check-kb")
	assert.Equal(t, 3000, bytes.Count(kb, []byte("\n")))
}

// The Parquet file holds check-cases's cases: read as the cases reader reads
// it (a Parquet input), each case equals the JSONL's.
func TestCheckCasesParquet(t *testing.T) {
	for _, mode := range []string{"check-cases-parquet", "check-cases-parquet-dict"} {
		t.Run(mode, func(t *testing.T) { checkCasesParquetAsJSONL(t, mode) })
	}
}

func checkCasesParquetAsJSONL(t *testing.T, mode string) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.parquet")
	data := gen(t, mode, "300")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	dicts := map[string]bool{}
	for _, c := range f.Metadata().RowGroups[0].Columns {
		dicts[strings.Join(c.MetaData.PathInSchema, ".")] = slices.Contains(c.MetaData.Encoding, format.RLEDictionary)
	}
	dict := mode == "check-cases-parquet-dict"
	assert.Equal(t, map[string]bool{"id": false, "locale": dict, "type": dict, "query": false, "must_cite_one_of.list.element": false,
		"retrieved.list.element.id": dict, "retrieved.list.element.parent_id": dict, "retrieved.list.element.score": false}, dicts)
	s, err := input.OpenSharded(context.Background(), p)
	require.NoError(t, err)
	defer s.Close()
	var fromPQ []casefile.Case
	require.NoError(t, casefile.StreamCases(context.Background(), s, p, func(c *casefile.Case) error {
		c.File, c.Raw = "", nil
		fromPQ = append(fromPQ, *c)
		return nil
	}))
	var fromJSONL []casefile.Case
	require.NoError(t, casefile.StreamCases(context.Background(), bytes.NewReader(gen(t, "check-cases", "300")), p, func(c *casefile.Case) error {
		c.File, c.Raw = "", nil
		fromJSONL = append(fromJSONL, *c)
		return nil
	}))
	require.Len(t, fromPQ, 300)
	assert.Equal(t, fromJSONL, fromPQ)
}

// The labels of both sides read under the lock, ids padded or not.
func TestLabels(t *testing.T) {
	lock, err := labelfile.ReadLock(gen(t, "lock"), "lock.json")
	require.NoError(t, err)
	for _, ids := range []string{"padded", "plain"} {
		for side, name := range map[labelfile.LabelSide]string{labelfile.HumanSide: "human", labelfile.JudgeSide: "judge"} {
			data := gen(t, "labels", name, "120", ids)
			ls, err := labelfile.ReadLabels(context.Background(), bytes.NewReader(data), name+".jsonl", side, lock)
			require.NoError(t, err)
			assert.Equal(t, 240, ls.Len())
		}
	}
	assert.Contains(t, string(gen(t, "labels", "human", "12", "plain")), `"case_id": "c11"`)
	assert.Contains(t, string(gen(t, "labels", "judge", "12", "padded")), `"case_id": "case-0000011"`)
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"x"}, {"check-cases"}, {"check-cases", "-1"}, {"check-cases-parquet"}, {"labels", "human", "3"}, {"labels", "both", "3", "plain"}} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errOut), "%q", args)
		assert.True(t, strings.HasPrefix(errOut.String(), "benchdata: "), errOut.String())
	}
}
