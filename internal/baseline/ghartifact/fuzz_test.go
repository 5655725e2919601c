package ghartifact

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
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
		if un != nil && (un.Reason != ciartifact.NoContext || strings.ContainsAny(un.Message, "\r\n")) {
			t.Fatalf("bad unavailable %+v", un)
		}
	})
}

// FuzzArchive: any downloaded bytes are extracted and verified, or refused with a
// reason; never a panic, never a file that does not pass verification. And
// what is extracted is refEntry's answer, the archive read apart with
// archive/zip: the whole content of the first root entry named FileName
// (a later one of the same name never replaces it), refused when its
// declared or inflated size is over the cap or it cannot be inflated.
func FuzzArchive(f *testing.F) {
	f.Add(goodZip(f, "seed"))
	f.Add(archive(f, map[string][]byte{ciartifact.FileName: []byte("not gzip")}))
	f.Add(archive(f, map[string][]byte{ciartifact.FileName: baselineFile(f, "other/x", "")}))
	f.Add([]byte("PK\x03\x04"))
	f.Add(twoEntries(f, baselineFile(f, "retrieval-gate/baseline@1", ""), []byte("second")))
	// Small caps keep a fuzzed zip bomb from filling memory.
	limits.file, limits.expanded, limits.header = 1<<20, 4<<20, 1<<16
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		un := extract(bytes.NewReader(data), int64(len(data)), 1, &out)
		want, ok := refEntry(data, limits.file)
		if un != nil {
			if un.Message == "" || strings.ContainsAny(un.Message, "\r\n") {
				t.Fatalf("bad unavailable %+v", un)
			}
			if ok {
				t.Fatalf("refused (%s); archive/zip reads %d bytes", un.Message, len(want))
			}
			return
		}
		if !ok || !bytes.Equal(want, out.Bytes()) {
			t.Fatalf("extracted %q; archive/zip reads %q (%v)", out.Bytes(), want, ok)
		}
		schema, un := ciartifact.VerifyReader(&out, "the baseline.jsonl.gz of artifact 1", ciartifact.Limits{Expanded: limits.expanded, Header: limits.header})
		if un == nil && !strings.HasPrefix(schema, ciartifact.SchemaPrefix) {
			t.Fatalf("verified schema %q", schema)
		}
		if un != nil && (un.Message == "" || strings.ContainsAny(un.Message, "\r\n")) {
			t.Fatalf("bad unavailable %+v", un)
		}
	})
}

// refEntry is FuzzArchive's reference.
func refEntry(data []byte, capBytes int64) ([]byte, bool) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, false
	}
	for _, e := range zr.File {
		if e.Name != ciartifact.FileName {
			continue
		}
		if e.UncompressedSize64 > uint64(capBytes) {
			return nil, false
		}
		rc, err := e.Open()
		if err != nil {
			return nil, false
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, capBytes+1))
		if err != nil || int64(len(b)) > capBytes {
			return nil, false
		}
		return b, true
	}
	return nil, false
}

// twoEntries is a zip with two entries named FileName.
func twoEntries(t testing.TB, first, second []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, b := range [][]byte{first, second} {
		w, err := zw.Create(ciartifact.FileName)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
