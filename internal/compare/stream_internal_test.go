package compare

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamingIsTaken: runs with positioned reads whose query ids increase
// are scored as they are read (TestRunStreamedAsWhole's equality is then not
// the fallback's); a run out of order, a cases JSONL, a plain reader, the
// human sheet are read whole.
func TestStreamingIsTaken(t *testing.T) {
	const qrels = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\nq3 0 d3 3\n"
	sorted := "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq2 Q0 d3 1 1 t\nq3 Q0 d3 1 1 t\n"
	backwards := "q2 Q0 d3 1 1 t\nq1 Q0 d1 1 2 t\n"
	in := func(runs ...io.Reader) In {
		x := In{Qrels: Reader{Name: "qrels", R: strings.NewReader(qrels)}}
		for i, r := range runs {
			x.Runs = append(x.Runs, RunReader{Strategy: string(rune('a' + i)), Reader: Reader{Name: "run", R: r}})
		}
		return x
	}
	o := NewOptions()
	o.Resamples = 100
	for _, tc := range []struct {
		name           string
		in             In
		stream, scored bool
	}{
		{"sorted", in(strings.NewReader(sorted), bytes.NewReader([]byte(sorted))), true, true},
		{"a run backwards", in(strings.NewReader(sorted), strings.NewReader(backwards)), true, false},
		{"a cases JSONL", in(strings.NewReader(sorted), strings.NewReader(`{"id":"q1","retrieved":["d1"]}`+"\n")), false, false},
		{"a plain reader", in(strings.NewReader(sorted), io.MultiReader(strings.NewReader(sorted))), false, false},
		{"a human sheet", func() In {
			x := in(strings.NewReader(sorted))
			x.HumanQrels = Reader{Name: "sheet", R: strings.NewReader("query_id,doc_id,grade\n")}
			return x
		}(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, ok := streamable(context.Background(), tc.in, o)
			require.Equal(t, tc.stream, ok)
			if !ok {
				return
			}
			st, q, scored, err := runStreaming(context.Background(), tc.in, rs, o)
			require.NoError(t, err)
			require.NotNil(t, q)
			require.Equal(t, tc.scored, scored)
			if scored {
				assert.Equal(t, []string{"q1", "q2", "q3"}, st.res.QueryIDs)
				assert.Equal(t, 3, st.res.Strategies[0].RunQueries)
				assert.True(t, st.res.identical[0][1])
			}
		})
	}
}
