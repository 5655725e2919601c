package ghartifact

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzBranchOf: any event payload yields a branch or a NoContext reason, never a
// panic, and the message is one line.
func FuzzBranchOf(f *testing.F) {
	f.Add([]byte(prEvent("main", "octo/repo")))
	f.Add([]byte(`{"merge_group":{"base_ref":"refs/heads/x"}}`))
	f.Add([]byte(`{"repository":{"default_branch":"trunk"}}`))
	f.Add([]byte(`{"pull_request":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, un := branchOf(data)
		if (un == nil) == (b == "") {
			t.Fatalf("branch %q and unavailable %v", b, un)
		}
		if un != nil && (un.Reason != NoContext || strings.ContainsAny(un.Message, "\r\n")) {
			t.Fatalf("bad unavailable %+v", un)
		}
	})
}

// FuzzArchive: any downloaded bytes are extracted and verified, or refused with a
// reason; never a panic, never a file that does not pass verification.
func FuzzArchive(f *testing.F) {
	f.Add(goodZip(f, "seed"))
	f.Add(archive(f, map[string][]byte{FileName: []byte("not gzip")}))
	f.Add(archive(f, map[string][]byte{FileName: baselineFile(f, "other/x", "")}))
	f.Add([]byte("PK\x03\x04"))
	// Small caps keep a fuzzed zip bomb from filling memory.
	limits.file, limits.expanded, limits.header = 1<<20, 4<<20, 1<<16
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		un := extract(bytes.NewReader(data), int64(len(data)), 1, &out)
		if un != nil {
			if un.Message == "" || strings.ContainsAny(un.Message, "\r\n") {
				t.Fatalf("bad unavailable %+v", un)
			}
			return
		}
		schema, un := verifyReader(&out, "the baseline.jsonl.gz of artifact 1")
		if un == nil && !strings.HasPrefix(schema, SchemaPrefix) {
			t.Fatalf("verified schema %q", schema)
		}
		if un != nil && (un.Message == "" || strings.ContainsAny(un.Message, "\r\n")) {
			t.Fatalf("bad unavailable %+v", un)
		}
	})
}
