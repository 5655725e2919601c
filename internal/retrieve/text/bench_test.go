package text

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEach: one op is the terms of the demo's knowledge base (English,
// Spanish and Portuguese cards, read as one text).
func BenchmarkEach(b *testing.B) {
	files, err := filepath.Glob("../../../testdata/demo/kb/*/*")
	if err != nil || len(files) == 0 {
		b.Fatalf("the demo's cards: %v (%d files)", err, len(files))
	}
	var sb strings.Builder
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(d)
	}
	s := sb.String()
	var buf []byte
	terms := 0
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Each(s, buf, func([]byte) { terms++ })
	}
}
