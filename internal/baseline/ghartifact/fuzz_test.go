package ghartifact

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
)

// FuzzBranchOf: any event payload yields a branch or a NoContext reason, never a
// panic, and the message is one line. And the branch is refBranch's, read
// apart from the payload decoded as a map: the pull request's base ref, else
// the merge group's base ref without refs/heads/, else the repository's
// default branch, trimmed. (Payloads with a key that differs from one of
// those names only in case are left out: GitHub writes them in lower case,
// and encoding/json's field match folds case.)
func FuzzBranchOf(f *testing.F) {
	f.Add([]byte(prEvent("main", "octo/repo")))
	f.Add([]byte(`{"merge_group":{"base_ref":"refs/heads/x"}}`))
	f.Add([]byte(`{"repository":{"default_branch":"trunk"}}`))
	f.Add([]byte(`{"pull_request":null}`))
	f.Add([]byte(`{"pull_request":null,"merge_group":{"base_ref":" refs/heads/refs/heads/y "},"repository":{"default_branch":"trunk"}}`))
	f.Add([]byte(`{"pull_request":{"base":{}},"repository":{"default_branch":"trunk"}}`))
	f.Add([]byte(`{"pull_request":5,"repository":{"default_branch":"trunk"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, un := branchOf(data)
		if (un == nil) == (b == "") {
			t.Fatalf("branch %q and unavailable %v", b, un)
		}
		if un != nil && (un.Reason != ciartifact.NoContext || strings.ContainsAny(un.Message, "\r\n")) {
			t.Fatalf("bad unavailable %+v", un)
		}
		if want, ok := refBranch(data); ok && want != b {
			t.Fatalf("branch %q, the payload's %q", b, want)
		}
	})
}

// refBranch is FuzzBranchOf's reference; false when it does not apply (not
// a JSON object of the expected shape, or a key in another case).
func refBranch(data []byte) (string, bool) {
	var ev map[string]any
	if json.Unmarshal(data, &ev) != nil {
		return "", false
	}
	names := []string{"pull_request", "base", "ref", "merge_group", "base_ref", "repository", "default_branch"}
	folded := false
	var walk func(v any)
	walk = func(v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				for _, n := range names {
					if k != n && strings.EqualFold(k, n) {
						folded = true
					}
				}
				walk(x)
			}
		}
	}
	walk(ev)
	if folded {
		return "", false
	}
	// A known field of the wrong type (not null) fails the whole decoding:
	// no branch.
	bad := false
	obj := func(m map[string]any, k string) (map[string]any, bool) {
		x, ok := m[k].(map[string]any)
		if v, has := m[k]; has && v != nil && !ok {
			bad = true
		}
		return x, ok
	}
	checkStr := func(m map[string]any, k string) {
		if v, has := m[k]; has && v != nil {
			if _, ok := v.(string); !ok {
				bad = true
			}
		}
	}
	pr, _ := obj(ev, "pull_request")
	base, _ := obj(pr, "base")
	checkStr(base, "ref")
	mg, _ := obj(ev, "merge_group")
	checkStr(mg, "base_ref")
	repo, _ := obj(ev, "repository")
	checkStr(repo, "default_branch")
	if bad {
		return "", true
	}
	str := func(m map[string]any, k string) string {
		s, _ := m[k].(string)
		return s
	}
	var b string
	if pr, ok := obj(ev, "pull_request"); ok {
		base, _ := obj(pr, "base")
		b = str(base, "ref")
	} else if mg, ok := obj(ev, "merge_group"); ok {
		b = strings.TrimPrefix(str(mg, "base_ref"), "refs/heads/")
	} else if repo, ok := obj(ev, "repository"); ok {
		b = str(repo, "default_branch")
	}
	return strings.TrimSpace(b), true
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
		un := extract(context.Background(), bytes.NewReader(data), int64(len(data)), 1, &out)
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
		schema, un := ciartifact.VerifyReader(context.Background(), &out, "the baseline.jsonl.gz of artifact 1", ciartifact.Limits{Expanded: limits.expanded, Header: limits.header})
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
