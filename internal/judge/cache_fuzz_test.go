package judge

import (
	"bytes"
	"context"
	"testing"
)

// FuzzCacheLoad: loading never panics, keeps only valid entries, and the
// offset it keeps ends on a line boundary of the input (or after a BOM at its
// start).
func FuzzCacheLoad(f *testing.F) {
	f.Add([]byte("{\"key\": \"a\", \"grade\": 1}\n{\"key\": \"b\", \"gr"))
	f.Add([]byte("{\"key\": \"a\", \"grade\": 3}"))
	f.Add([]byte("x\n"))
	f.Add([]byte("\xef\xbb\xbf{\"key\": \"a\", \"grade\": 2}\n{\"key\": \"b\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Cache{path: "c", entries: map[string]Entry{}}
		good, tail, err := c.load(context.Background(), bytes.NewReader(data))
		if err != nil {
			return
		}
		afterBOM := good == 3 && bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) // a BOM at the start is read past
		if good > int64(len(data)) || (good > 0 && data[good-1] != '\n' && !afterBOM) {
			t.Fatalf("offset %d is not a line end of %q", good, data)
		}
		if tail != nil && !bytes.Equal(data[good:], tail) {
			t.Fatalf("tail %q is not the rest %q", tail, data[good:])
		}
		for _, e := range c.entries {
			if !validEntry(e) {
				t.Fatalf("invalid entry %+v kept", e)
			}
		}
	})
}
