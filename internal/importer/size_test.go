package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodedCase is the line caseWriter's encoder writes for c, without its newline.
func encodedCase(t testing.TB, c caseOut) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(c))
	return strings.TrimSuffix(buf.String(), "\n")
}

func encodedKB(t testing.TB, id, title, text string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(struct {
		ID    string `json:"id"`
		Title string `json:"title,omitempty"`
		Text  string `json:"text"`
	}{id, title, text}))
	return strings.TrimSuffix(buf.String(), "\n")
}

// FuzzLineLen: the length a converted line will have, counted before it is
// built, is exactly what encoding/json writes (escapes, invalid UTF-8, U+2028,
// HTML escapes in a retrieved entry's own json.Marshal, omitted fields); with a
// limit, the count is over the limit exactly when the line is.
func FuzzLineLen(f *testing.F) {
	f.Add("id", "en", "", "q\x01\"\\<&>\u2028\xff", "g", "r", "", "text\b\f", 10)
	f.Add("", "", "t", "", "", "", "p", "", 0)
	f.Fuzz(func(t *testing.T, id, locale, typ, query, gold, rid, parent, text string, limit int) {
		c := caseOut{ID: id, Locale: locale, Type: typ, Query: query}
		if gold != "" {
			c.Gold = []string{gold, query}
		}
		c.Retrieved = []retrieved{{ID: rid}, {ID: rid, ParentID: parent, Text: text}, {ID: query}}
		want := len(encodedCase(t, c))
		assert.Equal(t, want, caseLineLen(&c, math.MaxInt), "the case line")
		limit = max(limit, 0) % (want + 2)
		assert.Equal(t, want > limit, caseLineLen(&c, limit) > limit, "over %d", limit)
		wantKB := len(encodedKB(t, id, typ, text+query))
		assert.Equal(t, wantKB, kbLineLen(id, typ, text+query, math.MaxInt), "the KB line")
		assert.Equal(t, wantKB > limit, kbLineLen(id, typ, text+query, limit) > limit)
	})
}

// Issue 33 item 5: a record of control characters under the input cap is
// refused before its converted line is built (a 60 MiB CSV record became 360
// MiB of JSON, and import reached 2.4 GB before refusing it); the memory the
// refusal takes is a small multiple of the record, not of its escapes.
func TestEscapesCheckedBeforeTheLineIsBuilt(t *testing.T) {
	const n = 8 << 20
	withCaps(t, 64<<20, map[Kind]int{KindCases: 16 << 20, KindQrels: 1 << 20, KindRun: 1 << 20, KindKB: 16 << 20})
	in := "query,retrieved\n\"" + strings.Repeat("\x01", n) + "\",a\n" // 48 MiB as JSON, over the 16 MiB cap
	f, _ := Lookup("csv")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := Convert(context.Background(), strings.NewReader(in), "in", &bytes.Buffer{}, f, Options{})
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, `in:2: case "row-1" would be a line of more than 16 MiB once converted (JSON escapes included)`)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(12*n), "bytes allocated to refuse an %d-byte record (421 MB before the fix)", n)

	docs, _ := Lookup("irds-docs")
	in = `{"doc_id": "d", "text": "` + strings.Repeat(`\u0001`, 3<<20) + `"}` + "\n" // 18 MiB in and out, over the 16 MiB cap
	_, _, err = Convert(context.Background(), strings.NewReader(in), "in", &bytes.Buffer{}, docs, Options{})
	require.ErrorContains(t, err, `in:1: document "d" would be a KB line of more than 16 MiB once converted`)
}
