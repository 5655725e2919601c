package trecfile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanAll is ScanTRECRun's queries, in the order handed on.
func scanAll(content string, k int) ([]RunQuery, error) {
	var out []RunQuery
	err := ScanTRECRun(context.Background(), strings.NewReader(content), "run", k, func(id []byte, docs [][]byte) error {
		q := RunQuery{ID: string(id), Docs: []string{}}
		for _, d := range docs {
			q.Docs = append(q.Docs, string(d))
		}
		out = append(out, q)
		return nil
	})
	return out, err
}

func TestScanTRECRun(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		k             int
		want          []RunQuery
		err           string // "" none; ErrNotSorted's text for it
	}{
		{"sorted, top k", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.9 t\nq1 Q0 d3 3 0.1 t\n\nq2 Q0 d9 1 3 t\n", 2,
			[]RunQuery{{ID: "q1", Docs: []string{"d2", "d1"}}, {ID: "q2", Docs: []string{"d9"}}}, ""},
		{"ties by docid descending, a repeated docid once", "a Q0 x 1 1 t\na Q0 y 2 1 t\na Q0 x 3 2 t\n", 5,
			[]RunQuery{{ID: "a", Docs: []string{"x", "y"}}}, ""},
		{"byte order, not numeric", "10 Q0 d 1 1 t\n9 Q0 d 1 1 t\n", 3,
			[]RunQuery{{ID: "10", Docs: []string{"d"}}, {ID: "9", Docs: []string{"d"}}}, ""},
		{"backwards", "q2 Q0 d 1 1 t\nq1 Q0 d 1 1 t\n", 3, nil, ErrNotSorted.Error()},
		{"numeric order", "9 Q0 d 1 1 t\n10 Q0 d 1 1 t\n", 3, nil, ErrNotSorted.Error()},
		{"interleaved", "q1 Q0 d 1 1 t\nq2 Q0 d 1 1 t\nq1 Q0 e 2 1 t\n", 3, nil, ErrNotSorted.Error()},
		{"malformed line, with its line", "q1 Q0 d 1 1 t\n\nq2 Q0 d 1 x t\n", 3, nil, `run:3: score "x" is not a finite decimal number`},
		{"empty", "\n \n", 3, nil, "run: empty run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scanAll(tc.content, tc.k)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// emit's error stops the scan and is returned.
	stop := errors.New("stop")
	n := 0
	err := ScanTRECRun(context.Background(), strings.NewReader("a Q0 d 1 1 t\nb Q0 d 1 1 t\nc Q0 d 1 1 t\n"), "run", 1, func([]byte, [][]byte) error {
		n++
		return stop
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

// FuzzScanTRECRun: on any input, ScanTRECRun agrees with ParseTRECRun: the
// same queries and top k when the ids are sorted, the same error when a line
// is bad before any id goes backwards, ErrNotSorted only for ids that do.
func FuzzScanTRECRun(f *testing.F) {
	f.Add("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 3 t\n", uint8(2))
	f.Add("q2 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.7 t\r\n\n", uint8(1))
	f.Add("q1 Q0 d1 1 x t\n", uint8(3))
	f.Add("\ufeffa b c d 1e308 f\na b c d -1e308 f\na b e d 1e309 f", uint8(4))
	f.Fuzz(func(t *testing.T, content string, k uint8) {
		kk := int(k%5) + 1
		got, gerr := scanAll(content, kk)
		want, werr := ParseTRECRun(context.Background(), strings.NewReader(content), "run", kk)
		if errors.Is(gerr, ErrNotSorted) {
			// Then the ids, in file order, do go backwards somewhere.
			var ids []string
			for _, line := range strings.Split(strings.TrimPrefix(content, "\ufeff"), "\n") {
				if f := strings.FieldsFunc(line, func(c rune) bool { return c == ' ' || c == '\t' || c == '\r' }); len(f) > 0 {
					ids = append(ids, f[0])
				}
			}
			ids = slices.Compact(ids)
			require.False(t, slices.IsSorted(ids) && len(slices.Compact(slices.Sorted(slices.Values(ids)))) == len(ids), "ErrNotSorted on %q", ids)
			return
		}
		if werr != nil {
			require.Error(t, gerr)
			assert.Equal(t, werr.Error(), gerr.Error())
			return
		}
		require.NoError(t, gerr)
		assert.Equal(t, want.Queries, got)
	})
}
