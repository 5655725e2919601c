package llm

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value of a batch's operation over GeminiValueCap is refused having held
// about the cap, by Download's reading (geminiInlined) and Get's
// (readGeminiOperation) alike: encoding/json's Decoder, behind a reader that
// stopped at the cap, grew its buffer by doubling and allocated some four
// times the cap (67 MB for a response 1 MiB over the 16 MiB cap) before it
// was refused. Allocation-measured, as TestLongNoteHeldOnce.
func TestLongGeminiValueHeldOnce(t *testing.T) {
	const over = GeminiValueCap + 1<<20
	inline := `{"name":"b","done":true,"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"},"response":{"text":"x"}},{"metadata":{"key":"b"},"response":{"text":"`
	for _, tc := range []struct {
		name, head, tail string
		space            bool // the long part is white space, not a string's zeros
	}{
		{"an inline response", inline, `"}}]}}}`, false},
		{"a field left out", `{"done":true,"x":"`, `","response":{"inlinedResponses":{"inlinedResponses":[]}}}`, false},
		{"a field kept", `{"done":true,"name":"`, `","response":{"inlinedResponses":{"inlinedResponses":[]}}}`, false},
		{"white space between inline responses", strings.TrimSuffix(inline, `{"metadata":{"key":"b"},"response":{"text":"`), `{"metadata":{"key":"b"}}]}}}`, true},
		// Refused as too long though its first bytes are not JSON: the
		// Decoder, which checked the syntax as it read, said "invalid
		// character 'x' looking for beginning of value" (a wording changed
		// on purpose: the Scanner finds a value's end by its brackets and
		// checks its syntax once it is whole, under the cap).
		{"a syntax error early in a value over the cap", strings.TrimSuffix(inline, `"`) + ` x "`, `"}}]}}}`, false},
	} {
		for _, reading := range []struct {
			name string
			read func(io.Reader) error
		}{
			{"Download", func(src io.Reader) error {
				return geminiInlined(src, func() (io.Writer, error) { return io.Discard, nil })
			}},
			{"Get", func(src io.Reader) error {
				var op geminiOperation
				return readGeminiOperation(src, &op, GeminiValueCap)
			}},
		} {
			t.Run(tc.name+", "+reading.name, func(t *testing.T) {
				var long io.Reader = io.LimitReader(zeros{}, over)
				if tc.space {
					long = io.LimitReader(spaces{}, over)
				}
				src := io.MultiReader(strings.NewReader(tc.head), long, strings.NewReader(tc.tail))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := reading.read(src)
				runtime.ReadMemStats(&after)
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%d bytes allocated", alloc)
				var tl *valueTooLongError
				require.ErrorAs(t, err, &tl)
				assert.Equal(t, "a value of the batch operation (an inline response, or a field of the batch) is longer than 16 MiB: refused, the cap on what reading it may hold", err.Error())
				assert.Less(t, alloc, uint64(GeminiValueCap+GeminiValueCap/2), "bytes allocated")
			})
		}
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
