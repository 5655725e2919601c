package gitlab

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A note over the cap is refused having held about the cap: encoding/json's
// Decoder, behind a reader that stopped at the cap, grew its buffer by
// doubling and allocated some three times the cap before it was refused.
// Allocation-measured: a 4 MiB note against a 1 MiB cap.
func TestLongNoteHeldOnce(t *testing.T) {
	const limit = 1 << 20
	big := strings.Repeat("x", 4<<20)
	for _, tt := range []struct{ name, page string }{
		{"first note", `[{"id":1,"body":"` + big + `"}]`},
		{"second note", `[{"id":1,"body":"a"},{"id":2,"body":"` + big + `"}]`},
		{"white space", `[{"id":1,"body":"a"}` + strings.Repeat(" ", 4<<20) + `]`},
		{"white space after the page", `[{"id":1,"body":"a"}]` + strings.Repeat(" ", 4<<20)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out []Note
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := readNotes(strings.NewReader(tt.page), limit, nil, &out)
			runtime.ReadMemStats(&after)
			t.Logf("%d bytes allocated", after.TotalAlloc-before.TotalAlloc)
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, KindTooLarge, ae.Kind)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(limit+limit/2), "bytes allocated")
		})
	}
}
