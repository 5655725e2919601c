package casefile_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
)

// A cases table whose retrieved ids and parent ids are dictionary-encoded,
// as Spark, DuckDB and pyarrow write repeated strings.
type pqDictEntry struct {
	ID       *string  `parquet:"id,optional,dict"`
	ParentID *string  `parquet:"parent_id,optional,dict"`
	Score    *float64 `parquet:"score,optional"`
}

type pqDictCase struct {
	ID        string        `parquet:"id"`
	Gold      []string      `parquet:"must_cite_one_of,list"`
	Retrieved []pqDictEntry `parquet:"retrieved,optional,list"`
}

// The same table without dictionaries.
type pqPlainEntry struct {
	ID       *string  `parquet:"id,optional"`
	ParentID *string  `parquet:"parent_id,optional"`
	Score    *float64 `parquet:"score,optional"`
}

type pqPlainCase struct {
	ID        string         `parquet:"id"`
	Gold      []string       `parquet:"must_cite_one_of,list"`
	Retrieved []pqPlainEntry `parquet:"retrieved,optional,list"`
}

// testKeyer keys an id by its place in known (plus one; 0 when unknown)
// and counts the ids it was given.
type testKeyer struct {
	known map[string]uint64
	calls int
}

func (k *testKeyer) Keys(ids []string, keys []uint64) {
	for i, id := range ids {
		keys[i] = k.known[id]
	}
	k.calls += len(ids)
}

// The retrieved identities read from dictionaries are keyed once per
// dictionary entry (MapOptions.Keyer) and a case whose identities all were
// has their keys (Case.RetrievedKeys, Keyer), whatever the row groups,
// pages, null, empty and invalid parent ids, long strings and the dictionaries' fallback to
// PLAIN midway; the cases are the same as without a Keyer, and a table
// without dictionaries gives no keys.
func TestParquetRowsKeyed(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 9))
	dir := t.TempDir()
	keyedAll, values, calls, fellBack, unkeyed := 0, 0, 0, 0, 0
	for i := range 40 {
		known := map[string]uint64{}
		for j, s := range pqStrings {
			if r.IntN(3) > 0 {
				known[s] = uint64(j) + 1
			}
		}
		rows := make([]pqDictCase, 1+r.IntN(300))
		for j := range rows {
			c := pqDictCase{ID: fmt.Sprint("case-", j), Gold: []string{goodStr(r)}}
			if r.IntN(6) > 0 {
				c.Retrieved = []pqDictEntry{}
				for range r.IntN(10) {
					id := goodStr(r) // a null or empty id is an error
					e := pqDictEntry{ID: &id, ParentID: optStr(r, 0.4)}
					c.Retrieved = append(c.Retrieved, e)
				}
			}
			rows[j] = c
		}
		p := filepath.Join(dir, fmt.Sprint(i, ".parquet"))
		opts := writerOptions(r)
		plain, fallback := i%5 == 4, false
		switch {
		case plain:
			prows := make([]pqPlainCase, len(rows))
			for j, c := range rows {
				prows[j] = pqPlainCase{ID: c.ID, Gold: c.Gold}
				if c.Retrieved != nil {
					prows[j].Retrieved = []pqPlainEntry{}
				}
				for _, e := range c.Retrieved {
					prows[j].Retrieved = append(prows[j].Retrieved, pqPlainEntry(e))
				}
			}
			writePQ(t, p, prows, opts...)
		case r.IntN(2) == 0: // a dictionary falls back to PLAIN midway
			fallback = true
			opts = append(opts, parquet.DictionaryMaxBytes(int64(8+r.IntN(40))))
			writePQ(t, p, rows, opts...)
		default:
			writePQ(t, p, rows, opts...)
		}
		workers := 1 + r.IntN(3)
		want, wantErr := readKeyed(t, p, nil, workers)
		require.Empty(t, wantErr, "table %d", i)
		k := &testKeyer{known: known}
		got, gotErr := readKeyed(t, p, k, workers)
		require.Empty(t, gotErr, "table %d", i)
		require.Len(t, got, len(want), "table %d", i)
		keyed := 0
		for j := range want {
			require.Equal(t, want[j].pqCaseView, got[j].pqCaseView, "table %d, case %d", i, j)
			require.Nil(t, want[j].keys, "table %d, case %d: no Keyer, no keys", i, j)
			if got[j].keys == nil {
				if fallback && len(got[j].Retrieved) > 0 {
					unkeyed++
				}
				continue
			}
			keyed++
			wantKeys := make([]uint64, 0)
			for _, e := range got[j].Retrieved {
				wantKeys = append(wantKeys, known[e.Identity()])
			}
			require.Equal(t, wantKeys, got[j].keys, "table %d, case %d", i, j)
			values += len(wantKeys)
		}
		if plain {
			require.Zero(t, keyed, "table %d: no dictionary, no keys", i)
			require.Zero(t, k.calls, "table %d", i)
		} else {
			keyedAll += keyed
			calls += k.calls
		}
		if fallback && keyed > 0 {
			fellBack++
		}
	}
	// (a row group of one row has a dictionary a row: TestParquetKeyDict
	// counts the calls)
	require.Less(t, calls, values, "keyed once per dictionary entry, not per value")
	require.Greater(t, unkeyed, 50, "cases with an identity read from a PLAIN page after the fallback")
	require.Greater(t, fellBack, 5, "tables keyed until their dictionaries fell back")
	require.Greater(t, keyedAll, 2000, "most cases of the dictionary tables keyed")
	require.Greater(t, values, 5000)
}

type keyedView struct {
	pqCaseView
	keys []uint64 // nil: the case has no Keyer
}

func readKeyed(t *testing.T, path string, k casefile.Keyer, workers int) ([]keyedView, string) {
	t.Helper()
	s, err := input.OpenSharded(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	var got []keyedView
	err = casefile.MapCasesWith(context.Background(), io.Reader(s), path, casefile.MapOptions{Workers: workers, StringsInLine: true, Keyer: k},
		func(c *casefile.Case, v *keyedView) error {
			v.pqCaseView = view(c)
			if c.Keyer != nil {
				require.Same(t, k, c.Keyer)
				v.keys = append([]uint64{}, c.RetrievedKeys...)
			}
			return nil
		},
		func(v *keyedView) error {
			got = append(got, *v)
			return nil
		})
	if err != nil {
		return got, err.Error()
	}
	return got, ""
}
