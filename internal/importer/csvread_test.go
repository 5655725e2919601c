package importer

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An 80 MiB quoted CSV cell was refused at the 64 MiB cap having held about
// five times the cap (encoding/csv's buffers grown by append): csvcap.Reader
// refuses it holding the cap and a chunk. Allocation-measured: a 4 MiB
// record against a 1 MiB cap allocated 6.5 to 7.6 MB through encoding/csv.
func TestLongCSVRecordHeldOnce(t *testing.T) {
	withCaps(t, 1<<20, nil)
	big := strings.Repeat("x", 4<<20)
	f, _ := Lookup("csv")
	for _, tc := range []struct{ name, in, want string }{
		{"quoted cell", "query,retrieved\n\"" + big + "\",a\n", "in:2: a CSV record longer than 1 MiB"},
		{"quoted cell over many lines", "query,retrieved\n\"" + strings.Repeat("x\n", 2<<20) + "\",a\n", "in:2: a CSV record longer than 1 MiB"},
		{"cell", "query,retrieved\nq," + big + "\n", "in:2: a CSV record longer than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := Convert(context.Background(), strings.NewReader(tc.in), "in", io.Discard, f, Options{})
			runtime.ReadMemStats(&after)
			require.ErrorContains(t, err, tc.want)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3<<19), "bytes allocated")
		})
	}
	// A record under the cap is read whole, its lines counted.
	var out strings.Builder
	_, st, err := Convert(context.Background(), strings.NewReader("query,retrieved\n\""+strings.Repeat("q\n", 1<<18)+"\",a\nr,b\n"), "in", &out, f, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Records)
}
