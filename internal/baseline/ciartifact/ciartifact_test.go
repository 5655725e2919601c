package ciartifact

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// VerifyReader accepts a gzip baseline whose first line names a retrieval-gate
// schema and refuses anything else with a reason and a one-line message.
func TestVerifyReader(t *testing.T) {
	const what = "the baseline.jsonl.gz of artifact 7"
	good := gz(t, `{"schema": "retrieval-gate/baseline@1"}`+"\n"+`{"id": "q1"}`+"\n")
	for _, tt := range []struct {
		name    string
		data    []byte
		l       Limits
		reason  Reason
		message string
	}{
		{name: "good", data: good, l: DefaultLimits},
		{name: "not gzip", data: []byte("not a gzip file"), l: DefaultLimits, reason: Corrupt, message: what + " is not gzip (gzip: invalid header)"},
		{name: "not an object", data: gz(t, "[1]\n"), l: DefaultLimits, reason: Corrupt, message: "the first line of " + what + " is not a JSON object"},
		{name: "no schema", data: gz(t, `{"id": "q1"}`+"\n"), l: DefaultLimits, reason: Corrupt, message: what + " is not a retrieval-gate baseline (schema none, want retrieval-gate/…)"},
		{name: "other schema", data: gz(t, `{"schema": "other/x\n"}`+"\n"), l: DefaultLimits, reason: Corrupt, message: what + ` is not a retrieval-gate baseline (schema "other/x ", want retrieval-gate/…)`},
		{name: "long first line", data: gz(t, `{"schema": "retrieval-gate/`+strings.Repeat("x", 2048)+`"}`), l: Limits{Expanded: MaxExpandedBytes, Header: 1024}, reason: Corrupt, message: "the first line of " + what + " is over 1 KiB"},
		{name: "expands beyond", data: good, l: Limits{Expanded: 45, Header: MaxHeaderBytes}, reason: TooLarge, message: what + " expands beyond the 45 bytes cap"},
		// The loader reads the key "schema" exactly; encoding/json's
		// case-insensitive field match verified {"SCHEMA": …} and refused a
		// "schema" followed by a "Schema".
		{name: "schema key in capitals", data: gz(t, `{"SCHEMA": "retrieval-gate/baseline@1"}`+"\n"), l: DefaultLimits, reason: Corrupt, message: what + " is not a retrieval-gate baseline (schema none, want retrieval-gate/…)"},
		{name: "schema then Schema", data: gz(t, `{"schema": "retrieval-gate/baseline@1", "Schema": "x"}`+"\n"), l: DefaultLimits},
		{name: "schema not a string", data: gz(t, `{"schema": 1}`+"\n"), l: DefaultLimits, reason: Corrupt, message: "the first line of " + what + " is not a JSON object"},
		{name: "schema null", data: gz(t, `{"schema": null}`+"\n"), l: DefaultLimits, reason: Corrupt, message: what + " is not a retrieval-gate baseline (schema none, want retrieval-gate/…)"},
		{name: "truncated", data: good[:len(good)-6], l: DefaultLimits, reason: Corrupt, message: what + " is damaged (unexpected EOF)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			schema, u := VerifyReader(context.Background(), bytes.NewReader(tt.data), what, tt.l)
			if tt.reason == "" {
				require.Nil(t, u)
				assert.Equal(t, "retrieval-gate/baseline@1", schema)
				return
			}
			require.NotNil(t, u)
			assert.Equal(t, &Unavailable{Reason: tt.reason, Message: tt.message}, u)
			assert.Empty(t, schema)
		})
	}
}

// VerifyFile reads the file back; a missing one is a local I/O problem.
func TestVerifyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	require.NoError(t, os.WriteFile(path, gz(t, `{"schema": "retrieval-gate/baseline@1"}`+"\n"), 0o600))
	schema, u := VerifyFile(context.Background(), path, "it", DefaultLimits)
	require.Nil(t, u)
	assert.Equal(t, "retrieval-gate/baseline@1", schema)
	_, u = VerifyFile(context.Background(), filepath.Join(dir, "gone"), "it", DefaultLimits)
	require.NotNil(t, u)
	assert.Equal(t, LocalIO, u.Reason)
	assert.True(t, strings.HasPrefix(u.Message, "could not read the baseline file back: "), u.Message)
}

func TestBytesText(t *testing.T) {
	for n, want := range map[int64]string{4 << 30: "4 GiB", 256 << 20: "256 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1536: "1536 bytes"} {
		assert.Equal(t, want, BytesText(n))
	}
}

// FuzzVerifyReader: any bytes are verified or refused with a reason and a
// one-line message, never a panic; and a file is verified exactly when
// refVerify, which inflates it whole apart from VerifyReader, finds an
// undamaged gzip stream within the expansion cap whose first line (within the
// header cap) is a JSON object with a string "schema" under SchemaPrefix, and
// the schema returned is that one. Each input is read under the fuzz caps and
// under small ones the fuzzer can reach.
func FuzzVerifyReader(f *testing.F) {
	f.Add(gz(f, `{"schema": "retrieval-gate/baseline@1"}`+"\n"))
	f.Add(gz(f, `{"schema": "x"}`))
	f.Add([]byte("\x1f\x8b"))
	f.Add(gz(f, `{"schema": "retrieval-gate/baseline@1"}`+"\n"+strings.Repeat("x", 300)))
	f.Add(gz(f, ` {"schema": "retrieval-gate/`+strings.Repeat("y", 60)+`"}`+"\n"))
	f.Add(gz(f, `{"schema": "retrieval-gate/a", "schema": 1}`))
	good := gz(f, `{"schema": "retrieval-gate/baseline@1"}`+"\n{}\n")
	f.Add(good[:len(good)-3])
	f.Add(append(append([]byte(nil), good...), good...)) // two gzip members
	limits := []Limits{{Expanded: 1 << 20, Header: 1 << 16}, {Expanded: 256, Header: 64}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range limits {
			schema, u := VerifyReader(context.Background(), bytes.NewReader(data), "the file", l)
			want, ok := refVerify(data, l)
			if u == nil {
				if !strings.HasPrefix(schema, SchemaPrefix) {
					t.Fatalf("verified schema %q", schema)
				}
				require.True(t, ok, "verified %q under %+v, the reference refuses", data, l)
				require.Equal(t, want, schema)
				continue
			}
			if u.Reason == "" || u.Message == "" || strings.ContainsAny(u.Message, "\r\n") {
				t.Fatalf("bad unavailable %+v", u)
			}
			require.False(t, ok, "refused (%s) under %+v, the reference verifies %q", u.Message, l, want)
			require.Empty(t, schema)
		}
	})
}

// refVerify is FuzzVerifyReader's reference: the whole stream inflated first
// (at most one byte past the cap), then its first line looked at.
func refVerify(data []byte, l Limits) (string, bool) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", false
	}
	all, err := io.ReadAll(io.LimitReader(zr, l.Expanded+1))
	if err != nil || int64(len(all)) > l.Expanded {
		return "", false
	}
	first := all
	if i := bytes.IndexByte(all, '\n'); i >= 0 {
		first = all[:i+1]
	}
	if len(first) > l.Header {
		return "", false
	}
	var head map[string]any
	if json.Unmarshal(first, &head) != nil || head == nil {
		return "", false
	}
	s, ok := head["schema"].(string)
	if !ok || !strings.HasPrefix(s, SchemaPrefix) {
		return "", false
	}
	return s, true
}
