package gate_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/cli"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
)

const demo = "../testdata/demo"

// runCLI runs `retrieval-gate args...` in process and returns its exit code.
func runCLI(t *testing.T, args ...string) int {
	t.Helper()
	code, _ := runCLIOut(t, args...)
	return code
}

// runCLIOut is runCLI with the standard output.
func runCLIOut(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := cli.Run(context.Background(), env, args)
	t.Logf("retrieval-gate %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	return code, out.String()
}

func loadKB(t *testing.T, path string) *gate.KB {
	t.Helper()
	kb, err := gate.LoadKB(context.Background(), path)
	require.NoError(t, err)
	return kb
}

// TestCheckEqualsCLI: Check's JSON and Markdown are the bytes of check --json
// and --markdown, and its verdict is the exit code's, on several cases files
// and options.
func TestCheckEqualsCLI(t *testing.T) {
	tests := []struct {
		name, cases, kb string
		opts            gate.Options
		flags           []string
		pass            bool
	}{
		{name: "demo", cases: demo + "/cases.jsonl", kb: demo + "/kb", pass: true},
		{name: "regressed with a floor", cases: demo + "/regressed.jsonl", kb: demo + "/kb",
			opts:  gate.Options{Floors: []string{"retrieval_hit_at_k=0.95"}},
			flags: []string{"--floor", "retrieval_hit_at_k=0.95"}},
		{name: "broken", cases: demo + "/broken/cases.jsonl", kb: demo + "/kb"},
		{name: "k, group floors, reference locale", cases: demo + "/cases.jsonl", kb: demo + "/kb",
			opts: gate.Options{K: 3, Floors: []string{"retrieval_recall_at_k@locale:PT-br=0.2", "retrieval_ndcg_at_k@type:golden=0.99"},
				ReferenceLocale: "es-419", ParentFromID: "#"},
			flags: []string{"--k", "3", "--floor", "retrieval_recall_at_k@locale:PT-br=0.2", "--floor", "retrieval_ndcg_at_k@type:golden=0.99",
				"--reference-locale", "es-419", "--parent-from-id", "#"}},
		{name: "allow empty", cases: demo + "/cases.jsonl", kb: demo + "/kb", opts: gate.Options{AllowEmpty: true},
			flags: []string{"--allow-empty"}, pass: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			js, md, html := filepath.Join(dir, "c.json"), filepath.Join(dir, "c.md"), filepath.Join(dir, "c.html")
			code, text := runCLIOut(t, append([]string{"check", "--cases", tt.cases, "--kb", tt.kb, "--json", js, "--markdown", md, "--html", html}, tt.flags...)...)

			f, err := os.Open(tt.cases)
			require.NoError(t, err)
			defer f.Close()
			rep, err := gate.Check(context.Background(), f, loadKB(t, tt.kb), tt.opts)
			require.NoError(t, err)
			var got bytes.Buffer
			require.NoError(t, rep.WriteJSON(&got))
			want, err := os.ReadFile(js)
			require.NoError(t, err)
			assert.Equal(t, string(want), got.String())
			wantMD, err := os.ReadFile(md)
			require.NoError(t, err)
			var gotMD bytes.Buffer
			require.NoError(t, rep.WriteMarkdown(&gotMD))
			assert.Equal(t, string(wantMD), gotMD.String())
			var gotText, gotHTML bytes.Buffer
			require.NoError(t, rep.WriteText(&gotText))
			assert.Equal(t, text, gotText.String(), "the terminal report")
			_, verbose := runCLIOut(t, append([]string{"check", "--cases", tt.cases, "--kb", tt.kb, "--verbose"}, tt.flags...)...)
			var gotVerbose bytes.Buffer
			require.NoError(t, rep.WriteTextVerbose(&gotVerbose))
			assert.Equal(t, verbose, gotVerbose.String(), "the terminal report of --verbose")
			require.NoError(t, rep.WriteHTML(&gotHTML))
			wantHTML, err := os.ReadFile(html)
			require.NoError(t, err)
			assert.Equal(t, string(wantHTML), gotHTML.String())
			rep.CommentKey = "nightly"
			gotMD.Reset()
			require.NoError(t, rep.WriteMarkdown(&gotMD))
			assert.True(t, strings.HasPrefix(gotMD.String(), "<!-- retrieval-gate:nightly -->\n"), "the marker carries CommentKey")
			assert.Equal(t, tt.pass, rep.Passed())
			assert.Equal(t, tt.pass, code == 0, "exit %d", code)
			if tt.pass {
				assert.Equal(t, gate.VerdictPass, rep.Verdict())
			} else {
				assert.Equal(t, gate.VerdictFail, rep.Verdict())
			}
		})
	}
}

func TestCheckReportFields(t *testing.T) {
	f, err := os.Open(demo + "/broken/cases.jsonl")
	require.NoError(t, err)
	defer f.Close()
	rep, err := gate.Check(context.Background(), f, loadKB(t, demo+"/kb"), gate.Options{Floors: []string{"retrieval_hit_at_k=0.99"}})
	require.NoError(t, err)
	gates := rep.Gates()
	require.NotEmpty(t, gates)
	assert.Equal(t, "integrity", gates[0].Name)
	assert.Equal(t, gate.StatusFail, gates[0].Status)
	assert.True(t, math.IsNaN(gates[0].Threshold), "a gate on no measure has no threshold")
	last := gates[len(gates)-1]
	assert.Equal(t, "floor:retrieval_hit_at_k@overall", last.Name)
	assert.Equal(t, "overall", last.Group)
	assert.Equal(t, "retrieval_hit_at_k", last.Measure)
	assert.InDelta(t, 0.99, last.Threshold, 0)
	assert.Positive(t, last.N)
	groups := rep.Groups()
	require.NotEmpty(t, groups)
	assert.Equal(t, "overall", groups[0].Name)
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	assert.Contains(t, names, "type:golden")
	assert.Contains(t, names, "locale:pt-BR")
	m := groups[0].Measures[0]
	assert.Equal(t, "retrieval_hit_at_k", m.Key)
	assert.LessOrEqual(t, m.Low, m.Mean)
	assert.GreaterOrEqual(t, m.High, m.Mean)
	assert.Equal(t, groups[0].N, m.N)
}

func TestCheckErrors(t *testing.T) {
	kb := loadKB(t, demo+"/kb")
	ctx := context.Background()
	_, err := gate.Check(ctx, strings.NewReader(`{"id": "a", "query": "q"`+"\n"), kb, gate.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stdin:1:")
	_, err = gate.Check(ctx, strings.NewReader(""), kb, gate.Options{Floors: []string{"nope=1"}})
	require.ErrorContains(t, err, `unknown measure "nope"`)
	_, err = gate.Check(ctx, strings.NewReader(""), kb, gate.Options{K: -1})
	require.EqualError(t, err, "gate: Options.K must be at least 1, or 0 for the k the cases record, got -1") // it said "K", and "at least 1"
	_, err = gate.Check(ctx, strings.NewReader(""), nil, gate.Options{})
	require.Error(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	f, err := os.Open(demo + "/cases.jsonl")
	require.NoError(t, err)
	defer f.Close()
	_, err = gate.Check(cctx, f, kb, gate.Options{})
	require.ErrorIs(t, err, context.Canceled)
}

// TestLiveEqualsCLI: Live is retrieve then check --json, byte for byte, with
// the embedded store; and it passes the demo's floors.
func TestLiveEqualsCLI(t *testing.T) {
	for _, strategy := range []string{"hybrid", "dense", "lexical"} {
		t.Run(strategy, func(t *testing.T) {
			dir := t.TempDir()
			run, js := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "c.json")
			require.Equal(t, 0, runCLI(t, "retrieve", "--kb", demo+"/kb", "--cases", demo+"/cases.jsonl", "--out", run, "--strategy", strategy))
			require.Equal(t, 0, runCLI(t, "check", "--cases", run, "--kb", demo+"/kb", "--json", js,
				"--floor", "retrieval_hit_at_k=0.85", "--floor", "retrieval_recall_at_k=0.8"))
			want, err := os.ReadFile(js)
			require.NoError(t, err)

			f, err := os.Open(run) // named like the CLI's cases file
			require.NoError(t, err)
			defer f.Close()
			cases, err := os.Open(demo + "/cases.jsonl")
			require.NoError(t, err)
			defer cases.Close()
			rep, err := gate.Live(context.Background(), gate.LiveOptions{KB: demo + "/kb", Cases: renamed{cases, run}, Strategy: gate.Strategy(strategy),
				Check: gate.Options{Floors: []string{"retrieval_hit_at_k=0.85", "retrieval_recall_at_k=0.8"}}})
			require.NoError(t, err)
			assert.True(t, rep.Passed())
			var got bytes.Buffer
			require.NoError(t, rep.WriteJSON(&got))
			assert.Equal(t, string(want), got.String())
		})
	}
}

// TestLiveRerankAndLocalesEqualCLI: LiveOptions.RerankURL and AllLocales
// are retrieve's --rerank-url and --all-locales: the same report as the
// command line's, byte for byte, against a TEI /rerank server (the stand-in
// the reranker client's tests use); and reranking by a score that reverses
// the strategy's order does change the retrieved cases, so the field is not
// ignored.
func TestLiveRerankAndLocalesEqualCLI(t *testing.T) {
	reverse := func(_, text string) float64 { return -float64(len(text)) } // shortest text first
	srv := httptest.NewServer(reranktest.Handler(32, reverse))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		args []string
		o    gate.LiveOptions
	}{
		{"rerank", []string{"--rerank-url", srv.URL}, gate.LiveOptions{RerankURL: srv.URL}},
		{"all locales", []string{"--all-locales"}, gate.LiveOptions{AllLocales: true}},
		{"both, lexical", []string{"--rerank-url", srv.URL, "--all-locales", "--strategy", "lexical"}, gate.LiveOptions{RerankURL: srv.URL, AllLocales: true, Strategy: gate.StrategyLexical}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			run, js, plain := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "c.json"), filepath.Join(dir, "plain.jsonl")
			require.Equal(t, 0, runCLI(t, append([]string{"retrieve", "--kb", demo + "/kb", "--cases", demo + "/cases.jsonl", "--out", run}, tc.args...)...))
			strategy := "hybrid"
			if tc.o.Strategy != "" {
				strategy = string(tc.o.Strategy)
			}
			require.Equal(t, 0, runCLI(t, "retrieve", "--kb", demo+"/kb", "--cases", demo+"/cases.jsonl", "--out", plain, "--strategy", strategy))
			a, err := os.ReadFile(run)
			require.NoError(t, err)
			b, err := os.ReadFile(plain)
			require.NoError(t, err)
			require.NotEqual(t, string(b), string(a), "the option changed nothing retrieved")
			code := runCLI(t, "check", "--cases", run, "--kb", demo+"/kb", "--json", js)
			want, err := os.ReadFile(js)
			require.NoError(t, err)

			cases, err := os.Open(demo + "/cases.jsonl")
			require.NoError(t, err)
			defer cases.Close()
			o := tc.o
			o.KB, o.Cases = demo+"/kb", renamed{cases, run}
			rep, err := gate.Live(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, code == 0, rep.Passed())
			var got bytes.Buffer
			require.NoError(t, rep.WriteJSON(&got))
			assert.Equal(t, string(want), got.String())
		})
	}
}

type renamed struct {
	*os.File
	name string
}

func (r renamed) Name() string { return r.name }

func TestLiveChroma(t *testing.T) {
	url := os.Getenv("CHROMA_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CHROMA_URL is empty in CI: the Chroma live gate must run (export CHROMA_URL=$(scripts/chroma-local start | tail -n 1))")
		}
		t.Skip("CHROMA_URL not set: export CHROMA_URL=$(scripts/chroma-local start | tail -n 1)")
	}
	cases, err := os.Open(demo + "/cases.jsonl")
	require.NoError(t, err)
	defer cases.Close()
	rep, err := gate.Live(context.Background(), gate.LiveOptions{KB: demo + "/kb", Cases: cases, Store: gate.StoreChroma, StoreURL: url,
		Check: gate.Options{Floors: []string{"retrieval_hit_at_k=0.85", "retrieval_recall_at_k=0.8"}}})
	require.NoError(t, err)
	assert.True(t, rep.Passed())
}

func TestLiveErrors(t *testing.T) {
	ctx := context.Background()
	_, err := gate.Live(ctx, gate.LiveOptions{KB: demo + "/kb", Cases: strings.NewReader(`{"id": "a", "gold": ["x"]}` + "\n")})
	require.ErrorContains(t, err, `stdin:1: case "a" has no "query"`)
	_, err = gate.Live(ctx, gate.LiveOptions{KB: demo + "/kb", Cases: strings.NewReader(""), Strategy: "bm25"})
	require.ErrorContains(t, err, "must be dense, lexical or hybrid")
	_, err = gate.Live(ctx, gate.LiveOptions{KB: demo + "/nope", Cases: strings.NewReader("")})
	require.Error(t, err)
	// The zero KB names the field (it was "failed to read knowledge base:
	// stat : no such file or directory"); so does LoadKB's empty path.
	_, err = gate.Live(ctx, gate.LiveOptions{Cases: strings.NewReader("")})
	require.EqualError(t, err, "gate: LiveOptions.KB is empty: the knowledge base's path is required")
	_, err = gate.LoadKB(ctx, "")
	require.EqualError(t, err, "gate: no knowledge base path (empty)")
	// A case check refuses after retrieval: check's error, not the pipe's.
	_, err = gate.Live(ctx, gate.LiveOptions{KB: demo + "/kb",
		Cases: strings.NewReader(`{"id": "a", "query": "q", "gold": ["x"]}` + "\n" + `{"id": "a", "query": "q", "gold": ["x"]}` + "\n")})
	require.ErrorContains(t, err, `duplicate case id "a"`)
}

// A nil reader, or a nil pointer behind the interface, is an error, not a
// panic (issue 33 item 8).
func TestNilReaders(t *testing.T) {
	ctx := context.Background()
	kb := loadKB(t, demo+"/kb")
	for name, r := range map[string]io.Reader{"nil": nil, "nil *os.File": (*os.File)(nil), "nil *bytes.Buffer": (*bytes.Buffer)(nil), "nil *strings.Reader": (*strings.Reader)(nil)} {
		t.Run(name, func(t *testing.T) {
			require.NotPanics(t, func() {
				_, err := gate.Check(ctx, r, kb, gate.Options{})
				require.EqualError(t, err, "gate: no cases reader (nil)")
				_, err = gate.Live(ctx, gate.LiveOptions{KB: demo + "/kb", Cases: r})
				require.EqualError(t, err, "gate: LiveOptions.Cases is nil")
			})
		})
	}
	_, err := gate.Check(ctx, strings.NewReader(""), nil, gate.Options{})
	require.EqualError(t, err, "gate: no knowledge base")
}

// Check returns once ctx ends, also while its reader blocks (a pipe nobody
// writes to), within moments (issue 33 item 9, the counterpart of report.Read).
func TestCheckReturnsWhileItsReaderBlocks(t *testing.T) {
	kb := loadKB(t, demo+"/kb")
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := gate.Check(ctx, pr, kb, gate.Options{})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("gate.Check still blocked 10 s after its context ended")
	}
}

// The errors the package returns are safe to print where the runner reads
// (t.Fatal(err) in a workflow's job): data an error quotes (a repeated key of a
// case, a card's, an option's value) cannot forge a workflow
// command, and the errors still unwrap to their causes. Each printed as is
// before (`duplicate key "##[error]x"`).
func TestErrorsGuardWorkflowCommands(t *testing.T) {
	ctx := context.Background()
	kb := loadKB(t, demo+"/kb")
	_, err := gate.Check(ctx, strings.NewReader(`{"id": "a", "##[error]x": 1, "##[error]x": 2}`+"\n"), kb, gate.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `duplicate key "##\[error]x"`)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/kb.jsonl", []byte(`{"id": "c", "##[warning]y": 1, "##[warning]y": 2}`+"\n"), 0o600))
	_, kerr := gate.LoadKB(ctx, dir+"/kb.jsonl")
	require.Error(t, kerr)
	assert.Contains(t, kerr.Error(), `duplicate key "##\[warning]y"`)

	_, oerr := gate.LiveOptions{Embedder: "openai", EmbedderURL: "ftp://##[add-mask]w"}.Resolve()
	require.Error(t, oerr)
	assert.Contains(t, oerr.Error(), `"ftp://##\[add-mask]w"`)
	_, lerr := gate.Live(ctx, gate.LiveOptions{KB: demo + "/kb", Cases: strings.NewReader(`{"id": "a", "query": "q", "##[error]v": 1, "##[error]v": 2}` + "\n")})
	require.Error(t, lerr)
	assert.Contains(t, lerr.Error(), `duplicate key "##\[error]v"`)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, cerr := gate.Check(canceled, strings.NewReader(""), kb, gate.Options{})
	require.ErrorIs(t, cerr, context.Canceled)

	for _, e := range []error{err, kerr, oerr, lerr} {
		assert.Empty(t, runnertest.Commands(e.Error()+"\n", nil), e.Error())
		assert.NotContains(t, e.Error(), "##[", e.Error())
	}
	var oe interface{ Unwrap() error }
	require.ErrorAs(t, oerr, &oe, "the guarded error unwraps to its cause")
}

// A case's text that holds a workflow command (here a locale, shown in the
// groups) cannot forge one where a test prints the report to a CI log:
// WriteText and WriteTextVerbose pass the command's output guard.
func TestWriteTextGuardsWorkflowCommands(t *testing.T) {
	cases, err := os.ReadFile(demo + "/cases.jsonl")
	require.NoError(t, err)
	in := strings.ReplaceAll(string(cases), `"locale": "pt-BR"`, `"locale": "pt-BR ##[add-mask]y\n::error::x"`)
	require.NotEqual(t, string(cases), in)
	rep, err := gate.Check(context.Background(), strings.NewReader(in), loadKB(t, demo+"/kb"), gate.Options{})
	require.NoError(t, err)
	for name, write := range map[string]func(io.Writer) error{"WriteText": rep.WriteText, "WriteTextVerbose": rep.WriteTextVerbose} {
		var b bytes.Buffer
		require.NoError(t, write(&b), name)
		assert.Contains(t, b.String(), `##\[add-mask]y`, name)
		assert.Empty(t, runnertest.Commands(b.String(), nil), "%s:\n%s", name, b.String())
	}
}
