package readback_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// TestParseRefusesOverTheCapCheaply: a document of one value more than
// DocumentMaxValues (an object, an array and its elements) is refused at the first value past the cap, as the tree
// parser refuses it, by a scan that builds no tree: what Parse allocates stays
// near the document's own bytes (the tree of 8,388,609 values took about 1.1
// GB before it was refused). jsonpos's TestMaxValues holds the boundary.
func TestParseRefusesOverTheCapCheaply(t *testing.T) {
	if testing.Short() {
		t.Skip("a 17 MB document")
	}
	over := `{"x":[` + strings.Repeat("0,", jsonpos.DocumentMaxValues-2) + `0]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := readback.Parse(strings.NewReader(over), "doc.json")
	runtime.ReadMemStats(&after)
	require.EqualError(t, err, "doc.json:1: more than 8,388,608 values in one record (the cap on what a record may take in memory) at column "+itoa(len(over)-2))
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(8*len(over)), "Parse allocated %d bytes for a document of %d", allocated, len(over))

}

func itoa(n int) string {
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
