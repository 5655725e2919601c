package llm_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// TestBatchErrorsBounded: a batch object listing a million errors (a requests
// file of a million bad lines) keeps the first MaxBatchErrors and counts the
// rest; its error text names those and says how many more. Decoding it
// allocates less than the answer's bytes (26 KB for 3 MB; the list held
// whole and a message of every entry took 408 MB and made a 4 MB message).
func TestBatchErrorsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":"b1","object":"batch","status":"failed","errors":{"object":"list","data":[`)
	const n = 1_000_000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < 12 {
			fmt.Fprintf(&b, `{"code":"invalid_url","message":"bad url","line":%d}`, i+1)
		} else {
			b.WriteString(`{}`)
		}
	}
	b.WriteString(`]}}`)
	data := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var batch llm.Batch
	require.NoError(t, json.Unmarshal(data, &batch))
	text := batch.ErrorText()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes for an answer of %d", allocated, len(data))
	assert.Less(t, allocated, uint64(len(data)))
	require.Len(t, batch.Errors.Data.First, llm.MaxBatchErrors)
	assert.Equal(t, n-llm.MaxBatchErrors, batch.Errors.Data.More)
	assert.True(t, strings.HasPrefix(text, "line 1: invalid_url: bad url; line 2: invalid_url: bad url; "), text)
	assert.True(t, strings.HasSuffix(text, "; line 10: invalid_url: bad url; and 999990 more"), text)
}

// TestBatchErrorsTypes: every entry is decoded as an error object, kept or
// not: an entry of another type, or a list that is not one, is refused as
// before; null and an empty list are no errors.
func TestBatchErrorsTypes(t *testing.T) {
	for _, c := range []struct {
		data string
		ok   bool
		text string
	}{
		{`null`, true, ""},
		{`[]`, true, ""},
		{`[{"code":"c","message":"m"}]`, true, "c: m"},
		{`[{"code":"c","message":"m"},5]`, false, ""},
		{`[` + strings.Repeat(`{},`, 20) + `"x"]`, false, ""},
		{`{"code":"c"}`, false, ""},
		{`[{"code":1}]`, false, ""},
	} {
		var b llm.Batch
		err := json.Unmarshal([]byte(`{"status":"failed","errors":{"data":`+c.data+`}}`), &b)
		if !c.ok {
			require.Error(t, err, c.data)
			continue
		}
		require.NoError(t, err, c.data)
		assert.Equal(t, c.text, b.ErrorText(), c.data)
	}
}
