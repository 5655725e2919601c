package report_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/cli"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
	"github.com/retrieval-gate/retrieval-gate/report"
)

// TestReadEqualsReportFrom: the package renders a saved document as
// `report --from` does (text, Markdown, HTML), for check, compare and calibrate;
// and `report --from` of calibrate's --json prints and writes what calibrate
// itself printed and wrote, an unreliable kappa interval's mark and footnote
// included (the demo cut to 8 faithfulness pairs, all agreeing: the
// Wilson-disagreement interval, flagged below 50 pairs).
func TestReadEqualsReportFrom(t *testing.T) {
	dir := t.TempDir()
	runCode := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		code := cli.Run(context.Background(), env, args)
		return code, out.String(), errb.String()
	}
	run := func(args ...string) string {
		code, out, errs := runCode(args...)
		require.Contains(t, []int{0, 1}, code, errs)
		return out
	}
	checkJSON := filepath.Join(dir, "check.json")
	run("check", "--cases", "../testdata/demo/cases.jsonl", "--kb", "../testdata/demo/kb", "--json", checkJSON)
	compareJSON := filepath.Join(dir, "compare.json")
	run("compare", "--qrels", "../testdata/compare/qrels.trec", "--run", "bm25=../testdata/compare/bm25.trec",
		"--run", "dense=../testdata/compare/dense.trec", "--json", compareJSON)
	cut := func(name string) string {
		data, err := os.ReadFile(filepath.Join("../testdata/calibrate", name))
		require.NoError(t, err)
		var b strings.Builder
		kept := 0
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if strings.Contains(line, `"faithfulness"`) {
				if kept == 8 {
					continue
				}
				kept++
			}
			b.WriteString(line)
		}
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		return path
	}
	calibrateJSON, calibrateMD := filepath.Join(dir, "calibrate.json"), filepath.Join(dir, "calibrate.md")
	calibrateText := run("calibrate", "--human", cut("human.jsonl"), "--judge", cut("judge.jsonl"), "--lock", "../testdata/calibrate/lock.json",
		"--json", calibrateJSON, "--markdown", calibrateMD, "--comment", "never")
	calibrateMDText, err := os.ReadFile(calibrateMD)
	require.NoError(t, err)
	for _, out := range []string{calibrateText, string(calibrateMDText)} {
		require.Regexp(t, `faithfulness.* \[0\.\d{3}, 1\.000\]† `, out)
		require.Contains(t, out, "\n† unreliable: this interval's method covers less than 95% at this n in simulation (")
	}
	for _, tt := range []struct {
		path, command string
	}{{checkJSON, "check"}, {compareJSON, "compare"}, {calibrateJSON, "calibrate"}} {
		t.Run(tt.command, func(t *testing.T) {
			md, html := filepath.Join(t.TempDir(), "r.md"), filepath.Join(t.TempDir(), "r.html")
			args := []string{"report", "--from", tt.path, "--markdown", md}
			if tt.command != "calibrate" { // calibrate has no HTML report
				args = append(args, "--html", html)
			}
			fromText := run(args...)
			if tt.command == "calibrate" {
				assert.Equal(t, calibrateText, fromText, "report --from prints what calibrate printed")
				again, err := os.ReadFile(md)
				require.NoError(t, err)
				assert.Equal(t, string(calibrateMDText), string(again), "and writes the Markdown it wrote")
			}

			f, err := os.Open(tt.path)
			require.NoError(t, err)
			defer f.Close()
			doc, err := report.Read(context.Background(), f, tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.command, doc.Command())
			var text, verbose, gotMD, gotHTML, gotJSON bytes.Buffer
			require.NoError(t, doc.WriteText(&text))
			assert.Equal(t, fromText, text.String())
			// The whole terminal report: report --from --verbose's for check
			// (which refuses --verbose for the others, whose text is whole).
			require.NoError(t, doc.WriteTextVerbose(&verbose))
			if tt.command == "check" {
				assert.Equal(t, run("report", "--from", tt.path, "--verbose"), verbose.String(), "report --from --verbose")
				assert.NotEqual(t, text.String(), verbose.String())
			} else {
				assert.Equal(t, text.String(), verbose.String())
			}
			require.NoError(t, doc.WriteJSON(&gotJSON))
			wantJSON, err := os.ReadFile(tt.path)
			require.NoError(t, err)
			assert.Equal(t, string(wantJSON), gotJSON.String(), "the document written back as the command wrote it") //nolint:testifylint // byte for byte, not merely the same JSON
			require.NoError(t, doc.WriteMarkdown(&gotMD))
			wantMD, err := os.ReadFile(md)
			require.NoError(t, err)
			assert.Equal(t, string(wantMD), gotMD.String())
			// CommentKey sets check's and calibrate's marker, as report
			// --from --comment-key does. Compare's Markdown has none (nor has
			// compare's --markdown file): the key is refused by both, writing
			// nothing (it was accepted and ignored).
			doc.CommentKey = "nightly"
			keyed := filepath.Join(t.TempDir(), "k.md")
			gotMD.Reset()
			if tt.command == "compare" {
				const why = "a compare document's Markdown has no comment marker to carry a key: compare's --markdown writes none (the key of compare's PR comment is compare --comment-key)"
				code, out, errs := runCode("report", "--from", tt.path, "--markdown", keyed, "--comment-key", "nightly")
				assert.Equal(t, 2, code)
				assert.Contains(t, errs, "retrieval-gate: report: --comment-key: "+why+"\n")
				assert.Empty(t, out)
				assert.NoFileExists(t, keyed)
				err := doc.WriteMarkdown(&gotMD)
				require.ErrorIs(t, err, report.ErrNoMarker)
				require.EqualError(t, err, why)
				assert.Empty(t, gotMD.String())
				doc.CommentKey = ""
				require.NoError(t, doc.WriteMarkdown(&gotMD), "without a key it writes as compare --markdown does")
				assert.Equal(t, string(wantMD), gotMD.String())
			} else {
				run("report", "--from", tt.path, "--markdown", keyed, "--comment-key", "nightly")
				wantKeyed, err := os.ReadFile(keyed)
				require.NoError(t, err)
				require.NoError(t, doc.WriteMarkdown(&gotMD))
				assert.Equal(t, string(wantKeyed), gotMD.String())
				assert.True(t, strings.HasPrefix(gotMD.String(), "<!-- retrieval-gate:nightly -->\n"), "the marker")
				assert.NotContains(t, gotMD.String()[1:], "<!-- retrieval-gate:", "one marker at most, at the start")
			}
			if tt.command == "calibrate" {
				require.ErrorIs(t, doc.WriteHTML(&gotHTML), report.ErrNoHTML)
				return
			}
			// Both render as HTML (a compare document: the dashboard, issue 32
			// item 3; it was "a compare document cannot be rendered as HTML").
			require.NoError(t, doc.WriteHTML(&gotHTML))
			wantHTML, err := os.ReadFile(html)
			require.NoError(t, err)
			assert.Equal(t, string(wantHTML), gotHTML.String())
			if tt.command == "compare" {
				for _, want := range []string{"Retrieval strategy comparison", "Decision: use dense", "Every measure (this run)", "Best of dense", "Worst of bm25"} {
					assert.Contains(t, gotHTML.String(), want)
				}
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`{`, "doc.json:1:"},
		{`[]`, "not an object"},
		{`{"a": 1}`, `no "schema"`},
		{`{"schema": "x"}`, "unknown schema"},
	} {
		_, err := report.Read(context.Background(), strings.NewReader(tt.doc), "doc.json")
		require.Error(t, err, tt.doc)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestReadCalibrate(t *testing.T) {
	const path = "../internal/report/calibratereport/testdata/golden/demo.json"
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	doc, err := report.Read(context.Background(), f, path)
	require.NoError(t, err)
	assert.Equal(t, "calibrate", doc.Command())
	var md bytes.Buffer
	require.NoError(t, doc.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "calibrate")
	assert.True(t, strings.HasPrefix(md.String(), "<!-- retrieval-gate:calibrate -->"), "calibrate's default key")
	doc.CommentKey = "nightly"
	md.Reset()
	require.NoError(t, doc.WriteMarkdown(&md))
	assert.True(t, strings.HasPrefix(md.String(), "<!-- retrieval-gate:nightly -->"), md.String()[:40])
	require.ErrorIs(t, doc.WriteHTML(&md), report.ErrNoHTML)
}

// A UTF-8 BOM at the start of a saved document is dropped, as every reader
// drops it (report --from refused it, "unexpected character '\ufeff'"): the
// document reads as the same file without it, for check, compare and
// calibrate (its whole text report too, report --from --verbose's), and so
// does check's own reader (checkreport.ReadParsed).
func TestReadDropsBOM(t *testing.T) {
	for _, path := range []string{
		"../internal/report/checkreport/testdata/check.json.golden",
		"../internal/report/readback/testdata/compare.json",
		"../internal/report/calibratereport/testdata/golden/demo.json",
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			plain, err := os.ReadFile(path)
			require.NoError(t, err)
			render := func(data []byte) (string, string, string) {
				doc, err := report.Read(context.Background(), bytes.NewReader(data), path)
				require.NoError(t, err)
				var js, text, verbose bytes.Buffer
				require.NoError(t, doc.WriteJSON(&js))
				require.NoError(t, doc.WriteText(&text))
				require.NoError(t, doc.WriteTextVerbose(&verbose))
				return js.String(), text.String(), verbose.String()
			}
			wantJSON, wantText, wantVerbose := render(plain)
			gotJSON, gotText, gotVerbose := render(append([]byte("\ufeff"), plain...))
			assert.Equal(t, wantJSON, gotJSON) //nolint:testifylint // byte for byte
			assert.Equal(t, wantText, gotText)
			assert.Equal(t, wantVerbose, gotVerbose)
		})
	}
	plain, err := os.ReadFile("../internal/report/checkreport/testdata/check.json.golden")
	require.NoError(t, err)
	read := func(b []byte) *checkreport.Document {
		data, root, err := readback.Parse(bytes.NewReader(b), "")
		require.NoError(t, err)
		d, err := checkreport.ReadParsed(data, root)
		require.NoError(t, err)
		return d
	}
	want, got := read(plain), read(append([]byte("\ufeff"), plain...))
	var wantText, gotText bytes.Buffer
	require.NoError(t, want.TextVerbose(&wantText))
	require.NoError(t, got.TextVerbose(&gotText))
	assert.Equal(t, wantText.String(), gotText.String())

	// A BOM that is not at the start is not dropped.
	_, err = report.Read(context.Background(), bytes.NewReader(append([]byte("\n\ufeff"), plain...)), "doc.json")
	require.ErrorContains(t, err, "doc.json:2: malformed JSON")
}

// A nil reader, or a nil pointer behind the interface, is an error, not a
// panic (issue 33 item 8).
func TestReadNilReader(t *testing.T) {
	for name, r := range map[string]io.Reader{"nil": nil, "nil *os.File": (*os.File)(nil), "nil *strings.Reader": (*strings.Reader)(nil)} {
		require.NotPanics(t, func() {
			_, err := report.Read(context.Background(), r, "doc.json")
			require.EqualError(t, err, "report: no reader (nil)", name)
		}, name)
	}
}

// Read returns ctx's error once ctx ends, also while its reader blocks: an
// io.Pipe nobody writes to (read by a helper goroutine) and an OS pipe (a read
// deadline), as gate.Check does (issue 33 item 9).
func TestReadReturnsWhileItsReaderBlocks(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	osr, osw, err := os.Pipe()
	require.NoError(t, err)
	defer osr.Close()
	defer osw.Close()
	for name, r := range map[string]io.Reader{"io.Pipe": pr, "os.Pipe": osr} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := report.Read(ctx, r, "doc.json")
				done <- err
			}()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.DeadlineExceeded)
			case <-time.After(10 * time.Second):
				t.Fatal("report.Read still blocked 10 s after its context ended")
			}
		})
	}
}

// Read's errors are guarded as the text report is: a document's schema
// "##[error]x" is named in the error as "##\\[error]x" (it was printed as is).
func TestReadErrorGuardsWorkflowCommands(t *testing.T) {
	_, err := report.Read(context.Background(), strings.NewReader(`{"schema": "##[error]x"}`), "doc.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown schema "##\[error]x"`)
	assert.Empty(t, runnertest.Commands(err.Error()+"\n", nil), err.Error())
}

// A document's text that holds a workflow command does not forge one in the
// terminal report: WriteText writes through the guard the command's standard
// output has, so a locale "es\n##[add-mask]y" (the newline a space already)
// prints as "##\[add-mask]y" (it printed as is).
func TestWriteTextGuardsWorkflowCommands(t *testing.T) {
	check, err := os.ReadFile("../internal/report/checkreport/testdata/check.json.golden")
	require.NoError(t, err)
	in := strings.Replace(string(check), `"es-419": {`, `"es-419\n::error::x ##[add-mask]y": {`, 1)
	doc, err := report.Read(context.Background(), strings.NewReader(in), "doc.json")
	require.NoError(t, err)
	for name, write := range map[string]func(io.Writer) error{"WriteText": doc.WriteText, "WriteTextVerbose": doc.WriteTextVerbose} {
		var b bytes.Buffer
		require.NoError(t, write(&b), name)
		assert.Contains(t, b.String(), `locale es-419 ::error::x ##\[add-mask]y`, name)
		assert.NotContains(t, b.String(), "##[", name)
		assert.Empty(t, runnertest.Commands(b.String(), nil), "%s:\n%s", name, b.String())
	}
}
