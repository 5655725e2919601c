package importer

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An 80 MiB ragas element was refused at the 64 MiB cap having held about
// three times the cap (encoding/json's Decoder doubles its buffer): jsonScan
// refuses it holding the cap and a piece. Allocation-measured: a 4 MiB
// element against a 1 MiB cap.
func TestLongJSONValueHeldOnce(t *testing.T) {
	withCaps(t, 1<<20, nil)
	big := strings.Repeat("x", 4<<20)
	for _, tc := range []struct{ name, format, in string }{
		{"ragas array element", "ragas", `[{"user_input": "q", "retrieved_context_ids": ["a"]}, {"user_input": "` + big + `"}]`},
		{"promptfoo skipped member", "promptfoo", `{"config": {"x": "` + big + `"}, "results": []}`},
		{"promptfoo key", "promptfoo", `{"` + big + `": 1, "results": []}`},
		{"promptfoo result", "promptfoo", `{"results": {"results": [{"vars": {"query": "` + big + `"}}]}}`},
		{"white space", "ragas", `[{"user_input": "q", "retrieved_context_ids": ["a"]}` + strings.Repeat(" ", 4<<20) + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := Lookup(tc.format)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := Convert(context.Background(), strings.NewReader(tc.in), "in", io.Discard, f, Options{LineAt: LineAt(strings.NewReader(tc.in))})
			runtime.ReadMemStats(&after)
			require.ErrorContains(t, err, "in:1: a JSON value longer than 1 MiB")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3<<19), "bytes allocated")
		})
	}
	// Under the cap, a long element is read whole.
	f, _ := Lookup("ragas")
	var out bytes.Buffer
	_, st, err := Convert(context.Background(), strings.NewReader(`[{"user_input": "`+strings.Repeat("q", 1<<19)+`"}, {"user_input": "r"}]`), "in", &out, f, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Records)
}
