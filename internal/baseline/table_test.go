package baseline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineAt is a baseline case line of id at case line n of its cases file.
func lineAt(id string, n int) string {
	return fmt.Sprintf(`{"id":%q,"line":%d,"type":"golden","gold":["g"],"scores":{"retrieval_hit_at_k":1},"rank":1,"top":["g"]}`+"\n", id, n)
}

// TestFind: the join's first try at the record of the case's own line (find)
// answers what the hash table answers, whatever the case line given: the
// record at the line, another record, no record, or an unknown line.
func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		seq     bool
		caseLen int // ids case-0 … case-(caseLen-1)
	}{
		{"same file", lineAt("case-0", 1) + lineAt("case-1", 2) + lineAt("case-2", 3) + lineAt("case-3", 4), true, 4},
		{"header lines first", lineAt("case-0", 3) + lineAt("case-1", 4) + lineAt("case-2", 5), true, 3},
		{"a blank line in the cases file", lineAt("case-0", 1) + lineAt("case-1", 3) + lineAt("case-2", 4), false, 3},
		{"another order", lineAt("case-2", 1) + lineAt("case-0", 2) + lineAt("case-1", 3), true, 3},
		{"no lines", `{"id":"case-0","scores":{}}` + "\n" + `{"id":"case-1","scores":{}}` + "\n", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := load(t, tc.text)
			assert.Equal(t, tc.seq, b.seq)
			for c := range tc.caseLen + 1 { // and one id not in the baseline
				id := IDHash(fmt.Sprintf("case-%d", c))
				want := b.lookup(id)
				if c == tc.caseLen {
					require.Equal(t, -1, want)
				} else {
					require.GreaterOrEqual(t, want, 0)
				}
				for line := -1; line <= tc.caseLen+3; line++ {
					assert.Equal(t, want, b.find(id, line), "case-%d at line %d", c, line)
				}
			}
		})
	}
}

// TestPresize: the table is sized from the header's case count, and a forged
// count reserves no more than 2^maxPresizeBits slots before the load refuses
// it (the count the header states is the count of case lines read).
func TestPresize(t *testing.T) {
	b := load(t, `{"schema":"retrieval-gate/baseline@1","cases":3}`+"\n"+lineAt("a", 1)+lineAt("b", 2)+lineAt("c", 3))
	assert.Equal(t, uint(12), b.bits)
	for _, tc := range []struct {
		cases int64
		bits  uint
	}{
		{1000000, 21}, // 1M cases at most 3/4 full
		{1099511627776, maxPresizeBits},
	} {
		var p Baseline
		p.presize(tc.cases)
		assert.Equal(t, tc.bits, p.bits, "%d cases", tc.cases)
		require.NoError(t, p.Close())
		_, err := Load(context.Background(), strings.NewReader(fmt.Sprintf(`{"schema":"retrieval-gate/baseline@1","cases":%d}`, tc.cases)+"\n"+lineAt("a", 1)), "base.jsonl", t.TempDir())
		require.EqualError(t, err, fmt.Sprintf("base.jsonl:1: the header states %d cases, the file has 1 case lines (up to line 2): a baseline cut short or edited; write it again with check --write-baseline", tc.cases))
	}
}

// TestGrowAndClose: a table not presized (the header states no count) grows
// and still finds every record; Close releases the records and the table,
// twice without harm.
func TestGrowAndClose(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"schema":"retrieval-gate/baseline@1"}` + "\n")
	const n = 10000
	for i := range n {
		sb.WriteString(lineAt(fmt.Sprintf("c%d", i), i+1))
	}
	b := load(t, sb.String())
	require.Equal(t, n, b.recs.n)
	assert.Greater(t, b.bits, uint(12))
	for i := range n {
		require.Equal(t, i, b.lookup(IDHash(fmt.Sprintf("c%d", i))))
	}
	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	assert.Equal(t, -1, b.lookup(IDHash("c1")))
}

// TestArenaSizes: the element sizes the mappings are made with.
func TestArenaSizes(t *testing.T) {
	assert.Equal(t, recordBytes, int(unsafe.Sizeof(record{})))
	assert.Equal(t, slotBytes, int(unsafe.Sizeof(slot{})))
	assert.Equal(t, 8, int(unsafe.Sizeof(uint64(0))))
}
