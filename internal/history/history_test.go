package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// A child process (see TestConcurrentAppendsFromProcesses) appends
// $HISTORY_APPENDS records of ~64 KiB to $HISTORY_FILE and exits.
func TestMain(m *testing.M) {
	if file := os.Getenv("HISTORY_FILE"); file != "" {
		n, _ := strconv.Atoi(os.Getenv("HISTORY_APPENDS"))
		who := os.Getenv("HISTORY_WHO")
		pad := strings.Repeat("x", 64<<10) // larger than PIPE_BUF and a page
		for i := range n {
			doc := fmt.Sprintf(`{"who":%q,"i":%d,"pad":%q}`, who, i, pad)
			if err := appendRecord(file, record(doc)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func record(doc string) history.Record {
	return history.Record{Command: "check", Commit: "abc", Branch: "main", Time: "2026-01-02T03:04:05Z", Document: json.RawMessage(doc),
		Fingerprint: history.Fingerprint{Digest: "sha256:x", Inputs: map[string]string{}, Params: map[string]string{"k": "5"}}}
}

// readAll reads every record of the history at path (see history.File) in file
// order, each with its document.
func readAll(path string) ([]history.Record, error) {
	var out []history.Record
	err := history.Scan(context.Background(), path, func(rec history.Record, doc *fastjson.Value) error {
		rec.Document = doc.MarshalTo(nil)
		out = append(out, rec)
		return nil
	})
	return out, err
}

func TestAppendAndRead(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, appendRecord(dir, record(`{"a": 1,
  "b": [1, 2]}`)))
	require.NoError(t, appendRecord(dir, record(`{"a":2}`)))
	raw, err := os.ReadFile(filepath.Join(dir, history.FileName))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	require.Len(t, lines, 2, "one line per run")
	//nolint:testifylint // encoded-compare: the exact bytes are the point (compact, keys sorted, one line per record)
	assert.Equal(t, `{"branch":"main","command":"check","commit":"abc","document":{"a":1,"b":[1,2]},"fingerprint":{"digest":"sha256:x","inputs":{},"params":{"k":"5"}},"schema":"retrieval-gate/history@1","time":"2026-01-02T03:04:05Z"}`, lines[0])
	recs, err := readAll(dir)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, 2, recs[1].Line)
	assert.JSONEq(t, `{"a":2}`, string(recs[1].Document))

	// A .jsonl path is the file itself.
	file := filepath.Join(t.TempDir(), "runs.jsonl")
	require.NoError(t, appendRecord(file, record(`{}`)))
	recs, err = readAll(file)
	require.NoError(t, err)
	assert.Len(t, recs, 1)

	assert.Error(t, appendRecord(dir, record(`{not json`)))
}

func TestReadErrorsNameFileAndLine(t *testing.T) {
	for name, c := range map[string]struct{ content, want string }{
		"not json":    {"\n{oops\n", ":2: not a history record"},
		"schema":      {`{"schema":"other@1","command":"check","document":{},"time":"2026-01-02T03:04:05Z"}` + "\n", `:1: schema "other@1"`},
		"no document": {`{"schema":"retrieval-gate/history@1","command":"check","document":null,"time":"2026-01-02T03:04:05Z"}` + "\n", ":1: record without a document object"},
		"bad time":    {`{"schema":"retrieval-gate/history@1","command":"check","document":{},"time":"yesterday"}` + "\n", `:1: time "yesterday"`},
		// One rule for duplicate keys in every JSON input (fastjson alone let the last win).
		"dup commit":      {`{"schema":"retrieval-gate/history@1","command":"check","commit":"a","commit":"b","document":{},"time":"2026-01-02T03:04:05Z"}` + "\n", `:1: duplicate key "commit" at column 69`},
		"dup in document": {"\n" + `{"schema":"retrieval-gate/history@1","command":"check","document":{"hit":{"mean":1,"mean":0}},"time":"2026-01-02T03:04:05Z"}` + "\n", `:2: duplicate key "mean" at column 84`},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "h.jsonl")
			require.NoError(t, os.WriteFile(file, []byte(c.content), 0o644))
			_, err := readAll(file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), file+c.want)
		})
	}
}

// Eight processes append 25 records of 64 KiB each to one file at the same
// time: every record arrives whole, none is lost.
func TestConcurrentAppendsFromProcesses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "h.jsonl")
	const procs, each = 8, 25
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "HISTORY_FILE="+file, "HISTORY_APPENDS="+strconv.Itoa(each), "HISTORY_WHO=p"+strconv.Itoa(p),
			"GORACE=atexit_sleep_ms=0") // no second of sleep at exit under -race
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}
	recs, err := readAll(file)
	require.NoError(t, err)
	require.Len(t, recs, procs*each)
	seen := map[string]bool{}
	for _, r := range recs {
		var d struct {
			Who string `json:"who"`
			I   int    `json:"i"`
			Pad string `json:"pad"`
		}
		require.NoError(t, json.Unmarshal(r.Document, &d))
		assert.Len(t, d.Pad, 64<<10)
		key := fmt.Sprintf("%s/%d", d.Who, d.I)
		assert.False(t, seen[key], key)
		seen[key] = true
	}
	assert.Len(t, seen, procs*each)
}

func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb")
	require.NoError(t, os.MkdirAll(filepath.Join(kb, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kb, "a.md"), []byte("a"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(kb, "sub", "b.md"), []byte("b"), 0o644))
	cases := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte("{}\n"), 0o644))
	fp1, err := history.NewFingerprint(t.Context(), map[string]string{"kb": kb, "cases": cases}, map[string]string{"k": "5"})
	require.NoError(t, err)
	fp2, err := history.NewFingerprint(t.Context(), map[string]string{"kb": kb, "cases": cases}, map[string]string{"k": "5"})
	require.NoError(t, err)
	assert.Equal(t, fp1, fp2, "deterministic")
	assert.Empty(t, fp2.Changed(fp1))

	require.NoError(t, os.WriteFile(filepath.Join(kb, "sub", "b.md"), []byte("B"), 0o644))
	fp3, err := history.NewFingerprint(t.Context(), map[string]string{"kb": kb, "cases": cases}, map[string]string{"k": "10"})
	require.NoError(t, err)
	assert.NotEqual(t, fp1.Digest, fp3.Digest)
	assert.Equal(t, []string{"--k", "kb"}, fp3.Changed(fp1))
	assert.Equal(t, fp1.Inputs["cases"], fp3.Inputs["cases"])

	// A KB named through a link to its directory is hashed as the directory
	// (issue 32 item 11; the walk of the link alone found no file).
	link := filepath.Join(t.TempDir(), "kb")
	require.NoError(t, os.Symlink(kb, link))
	fp4, err := history.NewFingerprint(t.Context(), map[string]string{"kb": link, "cases": cases}, map[string]string{"k": "10"})
	require.NoError(t, err)
	assert.Equal(t, fp3, fp4)

	_, err = history.NewFingerprint(t.Context(), map[string]string{"cases": filepath.Join(dir, "missing")}, nil)
	assert.Error(t, err)
}

// Read never panics, and what it accepts is a list of well-formed records (a
// BOM at the start of the file dropped).
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"branch":"main","command":"check","commit":"abc","document":{"a":1},"fingerprint":{"digest":"d","inputs":{},"params":{}},"schema":"retrieval-gate/history@1","time":"2026-01-02T03:04:05Z"}` + "\n"))
	f.Add([]byte("\n\n{}\n"))
	f.Add([]byte(`{"schema":"retrieval-gate/history@1","command":"x","document":[],"time":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"schema":"retrieval-gate/history@1","command":"check","document":{},"report":"reports/2026-a.html","time":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"schema":"retrieval-gate/history@1","command":"check","document":{},"report":"javascript:alert(1)//.html","time":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(" \r\n" + `{"schema":"retrieval-gate/history@1","command":"c","document":{"x":[1.50,"y"]},"fingerprint":{"inputs":{"cases":"sha256:1"},"params":{"k":"5"}},"time":"2026-01-02T03:04:05+01:00","branch":null}` + "\r\n\n" +
		`{"schema":"retrieval-gate/history@1","command":"compare","document":{},"time":"2026-01-02T03:04:05Z"}` + "\n" + `{"schema":"retrieval-gate/hist`))
	f.Add([]byte("\ufeff" + `{"schema":"retrieval-gate/history@1","command":"check","document":{"overall":{"metrics":{"m":{"mean":null,"ci95":[null,1],"n":0}}}},"time":"2026-01-02T03:04:05Z"}` + "\n"))
	f.Add([]byte(`{"schema":"retrieval-gate/history@1","command":"compare","document":{"strategies":{"a":{"metrics":{"m":{"mean":"0.5"}}}}},"time":"2026-01-02T03:04:05Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []history.Record
		err := history.ScanReader(context.Background(), "h.jsonl", bytes.NewReader(data), func(r history.Record, doc *fastjson.Value) error {
			r.Document = doc.MarshalTo(nil)
			recs = append(recs, r)
			return nil
		})
		lines := strings.Split(string(data), "\n")
		// A BOM at the start of the file is dropped.
		lines[0] = strings.TrimPrefix(lines[0], "\ufeff")
		var nonBlank []int // the lines that hold something, from 1
		for i, l := range lines {
			if strings.TrimSpace(l) != "" {
				nonBlank = append(nonBlank, i+1)
			}
		}
		var got []int
		for _, r := range recs {
			got = append(got, r.Line)
		}
		if err != nil {
			assert.Contains(t, err.Error(), "h.jsonl:")
			// Every line before the refused one was handed over, none after.
			var at int
			_, serr := fmt.Sscanf(err.Error(), "h.jsonl:%d:", &at)
			require.NoError(t, serr, err.Error())
			var before []int
			for _, n := range nonBlank {
				if n < at {
					before = append(before, n)
				}
			}
			assert.Equal(t, before, got, err.Error())
			return
		}
		// Every line that holds something is a record, in order, but a torn
		// last line (no newline after it) that is not one.
		want := nonBlank
		if len(want) > 0 && want[len(want)-1] == len(lines) && len(got) < len(want) {
			want = want[:len(want)-1]
		}
		if len(want) == 0 {
			want = nil
		}
		assert.Equal(t, want, got)
		for _, r := range recs {
			assert.Equal(t, history.Schema, r.Schema)
			assert.NotEmpty(t, r.Command)
			assert.True(t, json.Valid(r.Document))
			if r.Report != "" {
				assert.Regexp(t, history.ReportPath, r.Report, "only a relative reports/NAME.html link is kept")
			}
			_, terr := time.Parse(time.RFC3339, r.Time)
			require.NoError(t, terr)
			line := lines[r.Line-1]
			if !utf8.ValidString(line) || strings.Contains(line, `\u`) {
				continue // encoding/json and fastjson mend broken text differently
			}
			// The record is its line as encoding/json reads it (keys matched
			// exactly, as they are written).
			var ref map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(line), &ref), line)
			str := func(k string) string {
				var v *string
				if raw, ok := ref[k]; ok {
					require.NoError(t, json.Unmarshal(raw, &v), k)
				}
				if v == nil {
					return ""
				}
				return *v
			}
			fp := history.Fingerprint{Inputs: map[string]string{}, Params: map[string]string{}}
			var rfp map[string]json.RawMessage
			if raw, ok := ref["fingerprint"]; ok {
				require.NoError(t, json.Unmarshal(raw, &rfp))
			}
			if raw, ok := rfp["digest"]; ok {
				require.NoError(t, json.Unmarshal(raw, &fp.Digest))
			}
			for k, m := range map[string]map[string]string{"inputs": fp.Inputs, "params": fp.Params} {
				if raw, ok := rfp[k]; ok {
					require.NoError(t, json.Unmarshal(raw, &m))
				}
			}
			assert.Equal(t, history.Record{Branch: str("branch"), Command: str("command"), Commit: str("commit"), Report: str("report"),
				Schema: str("schema"), Time: str("time"), Fingerprint: fp, Line: r.Line}, history.Record{Branch: r.Branch, Command: r.Command,
				Commit: r.Commit, Report: r.Report, Schema: r.Schema, Time: r.Time, Fingerprint: r.Fingerprint, Line: r.Line}, line)
			var gotDoc, wantDoc any
			require.NoError(t, json.Unmarshal(r.Document, &gotDoc))
			require.NoError(t, json.Unmarshal(ref["document"], &wantDoc))
			assert.Equal(t, wantDoc, gotDoc)
		}
	})
}

// A record's report is optional and, when given, a relative reports/NAME.html.
func TestReportKey(t *testing.T) {
	line := func(report string) string {
		return `{"schema":"retrieval-gate/history@1","command":"check","document":{},"time":"2026-01-02T03:04:05Z","report":` + report + "}\n"
	}
	for _, tc := range []struct {
		report, want, err string
	}{
		{`"reports/20260102T030405Z-0123456789ab-check.html"`, "reports/20260102T030405Z-0123456789ab-check.html", ""},
		{`null`, "", ""},
		{`"https://example.com/x.html"`, "", `h.jsonl:1: report "https://example.com/x.html" is not a path reports/NAME.html`},
		{`"reports/../index.html"`, "", "is not a path"},
		{`"reports/.x.html"`, "", "is not a path"},
		{`"reports/a b.html"`, "", "is not a path"},
		{`3`, "", "h.jsonl:1: report is not a string"},
	} {
		var got []string
		err := history.ScanReader(context.Background(), "h.jsonl", strings.NewReader(line(tc.report)), func(r history.Record, _ *fastjson.Value) error {
			got = append(got, r.Report)
			return nil
		})
		if tc.err != "" {
			require.Error(t, err, tc.report)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, tc.report)
		assert.Equal(t, []string{tc.want}, got)
	}
	// The key is written only when set: records without it stay byte-identical.
	b, err := json.Marshal(history.Record{Command: "check", Document: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "report")
}

// appendRecord is history.AppendUndo without its warning and undo.
func appendRecord(path string, rec history.Record) error {
	_, err := appendWarn(context.Background(), path, rec)
	return err
}

// A scan stops with its context: a history of hundreds of megabytes takes
// seconds to read, and check, compare, evaluate and report --history heeded
// SIGINT and SIGTERM only once it was read.
func TestScanStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		require.NoError(t, appendRecord(dir, record(fmt.Sprintf(`{"a":%d}`, i))))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	err := history.Scan(ctx, dir, func(history.Record, *fastjson.Value) error {
		calls++
		cancel() // the signal, while the first record is seen
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls, "no record is read after the context ended")
}

// A run whose context has ended appends nothing, though the lock is free:
// the signal came during a step that does not watch the context (hashing
// the inputs for the record, rendering the reports), and the append is the
// first step that cannot be undone. It appended, and the outputs followed.
func TestAppendWithEndedContextAppendsNothing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, appendRecord(dir, record(`{"a":1}`)))
	file := filepath.Join(dir, history.FileName)
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = appendWarn(ctx, dir, record(`{"a":2}`))
	require.ErrorIs(t, err, context.Canceled)
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the history is as it was")
}

// appendWarn is history.AppendUndo without its undo.
func appendWarn(ctx context.Context, path string, rec history.Record) (string, error) {
	w, _, err := history.AppendUndo(ctx, path, rec)
	return w, err
}

// The input hashing stops with its context: a file, and a directory's files,
// of inputs that would take seconds to hash (stopped before the first read).
func TestFingerprintStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(file, make([]byte, 1<<20), 0o644))
	kb := filepath.Join(dir, "kb")
	require.NoError(t, os.Mkdir(kb, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kb, "a.md"), []byte("# a\n"), 0o644))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, in := range []map[string]string{{"cases": file}, {"kb": kb}} {
		_, err := history.NewFingerprint(ctx, in, nil)
		require.ErrorIs(t, err, context.Canceled, "%v", in)
	}
	_, err := history.NewFingerprint(t.Context(), map[string]string{"cases": file, "kb": kb}, nil)
	require.NoError(t, err)
}

// A record of more values than a history reads back (DocumentMaxValues) is
// refused at its line when read, before any tree is made of it, and is not
// written.
func TestRecordValuesCap(t *testing.T) {
	doc := `{"x":[` + strings.Repeat("0,", jsonpos.DocumentMaxValues) + `0]}`
	_, err := history.Line(record(doc))
	require.ErrorContains(t, err, "history: the record is not one a history reads back: more than 8,388,608 values in one record")
	text := `{"schema":"retrieval-gate/history@1","command":"check","document":` + doc + `,"time":"2026-01-02T03:04:05Z"}` + "\n"
	err = history.ScanReader(context.Background(), "h.jsonl", strings.NewReader(recordLine(t, `{}`)+text), func(history.Record, *fastjson.Value) error { return nil })
	require.ErrorContains(t, err, "h.jsonl:2: more than 8,388,608 values in one record (the cap on what a record may take in memory) at column ")
	// At the cap exactly (13 values beside the zeros), a record; one more is not.
	doc = `{"x":[` + strings.Repeat("0,", jsonpos.DocumentMaxValues-14) + `0]}`
	_, err = history.Line(record(doc))
	require.NoError(t, err)
	_, err = history.Line(record(`{"x":[0,` + doc[len(`{"x":[`):]))
	require.ErrorContains(t, err, "more than 8,388,608 values")
}
