package input

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCSVSeparators: fed in chunks of any size, with the record's start marked
// behind what was read ahead (as encoding/csv's buffer reads ahead), the
// counter refuses a record exactly when the commas from its start to the end of
// what it was given exceed the cap and the read-ahead.
func TestCSVSeparators(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		limit := 1 + rng.IntN(12)
		var data []byte
		for range rng.IntN(200) {
			data = append(data, ",a\n"[rng.IntN(3)])
		}
		ahead := 1 + rng.IntN(4)
		c := CSVSeparators{Max: limit, ReadAhead: ahead}
		var passed, mark int
		for passed < len(data) {
			n := min(len(data)-passed, 1+rng.IntN(9))
			err := c.Passed(data[passed : passed+n])
			passed += n
			want := bytes.Count(data[mark:passed], []byte{','}) > limit+ahead
			if want {
				require.ErrorIs(t, err, ErrTooManySeparators, "%q mark %d passed %d", data, mark, passed)
				break
			}
			require.NoError(t, err, "%q mark %d passed %d", data, mark, passed)
			// The next record may start anywhere up to what was given.
			if rng.IntN(2) == 0 {
				mark += rng.IntN(passed - mark + 1)
				c.Mark(int64(mark))
			}
		}
	}
	// A long stream of short records: the offsets behind the mark are dropped
	// (the slice stays small) and every record is counted from its start.
	c := CSVSeparators{Max: 3, ReadAhead: 1}
	rec := []byte("a,b,c,d\n")
	for i := range 100000 {
		c.Mark(int64(i * len(rec)))
		require.NoError(t, c.Passed(rec))
	}
	require.Less(t, len(c.offs), 20000)
	c.Mark(int64(100000 * len(rec)))
	require.ErrorIs(t, c.Passed([]byte("a,b,c,d,e,f")), ErrTooManySeparators)
	require.Equal(t, "more than 1,048,576 commas in one CSV record (the cap on what a record may take in memory)", ErrTooManySeparators.Error())
}
