package judge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 20 item 3: the cache opener drops a torn last line only from a file that
// is recognisably a judge cache; any other file is refused and left as it was.
func TestOpenCacheRefusesNonCacheNeverTruncates(t *testing.T) {
	entry := `{"key":"k1","grade":2,"reason":"r","model":"m","prompt_hash":"h","repeat":0,"answer_format":"json","prompt_tokens":1,"completion_tokens":1}`
	for _, tt := range []struct {
		name, text, want string // want: the file afterwards; "" means unchanged and refused
	}{
		{"one-line run", `{"id":"c1","query":"q","must_cite_one_of":["a"],"retrieved":["a"]}`, ""},
		{"TREC run line", "q1 Q0 a 1 0.5 t", ""},
		{"prose", "notes about the judge", ""},
		{"JSON of another shape", `{"keys":["a"]}`, ""},
		{"torn entry after entries", entry + "\n" + `{"key":"k2","gra`, entry + "\n"},
		{"torn first entry", `{"key":"k2","gra`, ""},
		{"complete last entry without newline", entry, entry + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			c, err := OpenCache(path)
			b, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			if tt.want == "" && tt.name != "torn first entry" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "not a judge cache entry")
				assert.Equal(t, tt.text, string(b), "the file was changed")
				return
			}
			require.NoError(t, err)
			require.NoError(t, c.Close())
			assert.Equal(t, tt.want, string(b))
		})
	}
}
