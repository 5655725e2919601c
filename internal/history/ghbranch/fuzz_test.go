package ghbranch

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The contents answer's decoder never panics, and what it accepts is content
// whose length is the answer's size (for base64), or nothing (for "none").
func FuzzDecodeContents(f *testing.F) {
	f.Add([]byte(`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","size":13,"encoding":"base64","content":"SGVsbG8sIFdv\ncmxkIQ==\n"}`))
	f.Add([]byte(`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","size":2000000,"encoding":"none","content":""}`))
	f.Add([]byte(`{"type":"file","sha":"x","size":-1,"encoding":"utf-8","content":"a"}`))
	f.Add([]byte(`[{"type":"dir"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cf contentsFile
		if json.Unmarshal(data, &cf) != nil {
			return
		}
		b, err := cf.decode()
		if err != nil {
			assert.Nil(t, b)
			return
		}
		assert.True(t, validSHA(cf.SHA))
		if cf.Encoding == "none" {
			assert.Empty(t, b)
			return
		}
		assert.Equal(t, "base64", cf.Encoding)
		assert.Equal(t, cf.Size, int64(len(b)))
	})
}
