package cli

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// nameForgePayloads carry a workflow command in a file name: after a
// character the runner trims at a line start but that ends none of its lines
// (a tab, U+2028, U+3000, U+0085), after a line end a file name may hold
// ("\n", "\r"), and in the legacy syntax, with a character a culture-sensitive
// comparison ignores inside it. Each names FORGED.
var nameForgePayloads = []string{
	"\t::error title=FORGED::x",
	"\u2028::error title=FORGED::x",
	"\u3000::error title=FORGED::x",
	"\u0085::warning title=FORGED::x",
	"\n::error title=FORGED::x",
	"\r::notice title=FORGED::x",
	" ##[error title=FORGED]x",
	"x#\u00ad#[warning title=FORGED]y",
}

// lineWith counts the lines of text that start with prefix and hold every one
// of words.
func lineWith(text, prefix string, words ...string) int {
	n := 0
	for l := range strings.Lines(text) {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			n++
		}
	}
	return n
}

// Every warning check prints on standard error, which gate.Report.Warnings
// now holds too (42fc068c): the knowledge base's skipped entries (check,
// retrieve, generate, judge, and evaluate once for all its stages, print one
// for each *.md entry of a directory they do not read: a dangling symbolic link, one out of the
// directory, a named pipe), a k other than the one the cases record (naming
// the cases file at its line) and the cases' top-level keys the format does
// not know. Entries, a cases file and keys named with a command in every
// syntax reach those warnings, one line each, inside Actions and outside, and
// no line of any stream, the job summary or the outputs file is a command.
func TestNoForgedCommandCheckWarnings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbDir := filepath.Join(dir, "kb")
	write(filepath.Join("kb", "a.md"), "---\nid: a\nlocale: en\n---\nalpha reset password\n")
	write(filepath.Join("kb", "b.md"), "---\nid: b\nlocale: en\n---\nbeta billing invoice\n")
	write("outside.md", "---\nid: outside\n---\nout of the knowledge base\n")
	for i, p := range nameForgePayloads {
		require.NoError(t, os.Symlink("nowhere.md", filepath.Join(kbDir, fmt.Sprintf("d%d%s.md", i, p))))
	}
	require.NoError(t, os.Symlink("../outside.md", filepath.Join(kbDir, "o"+nameForgePayloads[2]+".md")))
	unixtest.Mkfifo(t, filepath.Join(kbDir, "p"+nameForgePayloads[6]+".md"), 0o600)
	skipped := len(nameForgePayloads) + 2
	// Cases at retrieval.k 5 with unknown top-level keys, in a hostile file.
	var keys strings.Builder
	for i, p := range nameForgePayloads {
		fmt.Fprintf(&keys, `,%s:%d`, js(p), i)
	}
	cases := write("cases"+nameForgePayloads[2]+".jsonl",
		`{"id":"1","locale":"en","query":"reset password","must_cite_one_of":["a"],"retrieved":["a","b"],"retrieval":{"k":5}`+keys.String()+"}\n"+
			`{"id":"2","locale":"en","query":"billing invoice","must_cite_one_of":["b"],"retrieved":["b"]}`+"\n")

	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	const checkWarning = "retrieval-gate: warning: "
	for _, tc := range []struct {
		prefix string
		times  int // the skipped entries' warnings are printed this many times
		args   []string
	}{
		{checkWarning + "knowledge base: skipped ", 1, []string{"check", "--cases", cases, "--kb", kbDir, "--k", "3", "--comment", "never"}},
		{"retrieve: warning: knowledge base: skipped ", 1, []string{"retrieve", "--cases", cases, "--kb", kbDir, "--out", filepath.Join(dir, "out.jsonl")}},
		{"evaluate: warning: knowledge base: skipped ", 1, []string{"evaluate", "--kb", kbDir, "--out", filepath.Join(dir, "eval"), "--judge-url", llm.URL,
			"--judge-model", "fake", "--per-locale", "2", "--k", "2", "--bootstrap", "50", "--comment", "never"}},
		{"generate: warning: knowledge base: skipped ", 1, []string{"generate", "--kb", kbDir, "--out", filepath.Join(dir, "gen.jsonl"), "--generator-url", llm.URL,
			"--generator-model", "g", "--per-locale", "2"}},
		{"judge: warning: knowledge base: skipped ", 1, []string{"judge", "--kb", kbDir, "--run", "r=" + cases, "--k", "2", "--judge-url", llm.URL, "--judge-model", "fake",
			"--qrels", filepath.Join(dir, "judge.qrels"), "--judgments", filepath.Join(dir, "judgments.jsonl"), "--cache", "none"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			outside, inside := forgeRunData(t, dir, 0, true, tc.args...)
			for name, texts := range map[string]map[string]string{"outside Actions": outside, "inside Actions": inside} {
				// Every skipped entry's warning is there, naming it.
				assert.Equal(t, tc.times*skipped, lineWith(texts["stderr"], tc.prefix, "FORGED"), "%s: stderr:\n%s", name, texts["stderr"])
				// And nowhere else: evaluate warns once, not again in each
				// stage that reads the knowledge base.
				assert.Equal(t, tc.times*skipped, strings.Count(texts["stderr"], "warning: knowledge base: skipped "), "%s: stderr:\n%s", name, texts["stderr"])
				if tc.args[0] == "check" {
					assert.Equal(t, 1, lineWith(texts["stderr"], checkWarning+"--k 3 differs from the run's k (retrieval.k = 5 at ", "title=FORGED"), "%s: the k's warning", name)
					assert.Equal(t, 1, lineWith(texts["stderr"], checkWarning+"the cases have top-level keys the cases format does not know", "##\\[error title=FORGED]x", "\\u3000::error title=FORGED::x", "\\n::error title=FORGED::x"),
						"%s: the unknown keys' warning:\n%s", name, texts["stderr"])
				}
			}
		})
	}
}

// A per-locale churn gate's reason ends "per-locale churn gate: indicative
// only, not significance-tested" (869329a8), after the locale it names: a
// locale of the cases and ones the data lacks, each in the legacy syntax,
// reach the gate table of the terminal report, the Markdown report, the job
// summary and the report rendered again from the JSON (whose churn by locale
// names every hostile locale of the cases). No line of them is a command. (A
// flag's group holds no "::" and no "=": its syntax splits there.)
func TestNoForgedCommandChurnLocale(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbF := write("kb.jsonl", `{"id":"d0","text":"alpha"}`+"\n"+`{"id":"d1","text":"beta"}`+"\n"+`{"id":"d2","text":"gamma"}`+"\n")
	var base, run strings.Builder
	for rep := range 4 {
		for i, p := range forgePayloads {
			id := fmt.Sprintf("c%d-%d %s", i, rep, p) // the locales are lowercased, not the ids
			fmt.Fprintf(&base, `{"id":%s,"locale":%s,"type":"t","query":"q","must_cite_one_of":["d0"],"retrieved":["d0","d1"]}`+"\n", js(id), js(p))
			retrieved := `["d0","d1"]`
			if rep%2 == 1 {
				retrieved = `["d1","d2"]`
			}
			fmt.Fprintf(&run, `{"id":%s,"locale":%s,"type":"t","query":"q","must_cite_one_of":["d0"],"retrieved":%s}`+"\n", js(id), js(p), retrieved)
		}
	}
	baseCases, runCases := write("base.jsonl", base.String()), write("run.jsonl", run.String())
	baseline := filepath.Join(dir, "base.jsonl.gz")
	forgeRun(t, dir, 0, "check", "--cases", baseCases, "--kb", kbF, "--k", "2", "--write-baseline", baseline, "--comment", "never")

	gates := []string{
		"--max-churn", "locale:" + forgePayloads[0] + "=0", // a1 ##[stop-commands]FORGED
		"--min-rbo", "locale:" + forgePayloads[0] + "=0.99",
		"--max-churn", "locale:zz ##[error]FORGED=0.5", // a locale the data lacks
		"--max-churn", "locale:\u3000##[warning]FORGED=0.5",
	}
	md, jsonF := filepath.Join(dir, "churn.md"), filepath.Join(dir, "churn.json")
	args := append([]string{"check", "--cases", runCases, "--kb", kbF, "--k", "2", "--baseline", baseline, "--comment", "never", "--verbose",
		"--markdown", md, "--json", jsonF, "--junit", filepath.Join(dir, "churn.xml")}, gates...)
	outside, inside := forgeRunData(t, dir, 1, true, args...)
	// The four gates' rows, each naming its hostile locale (lowercased as the
	// cases' locales are).
	for name, text := range map[string]string{"stdout": outside["stdout"], "stdout in Actions": inside["stdout"]} {
		assert.Equal(t, 4, lineWith(text, "  ", "forged", "per-locale churn gate: indicative only, not significance-tested"), "%s:\n%s", name, text)
	}
	data, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Equal(t, 4, lineWith(string(data), "[", "forged", "per-locale churn gate: indicative only"), "the Markdown's reasons:\n%s", data)
	assert.Contains(t, inside["job summary"], "per-locale churn gate: indicative only")
	doc, err := os.ReadFile(jsonF)
	require.NoError(t, err)
	require.Contains(t, string(doc), `"by_locale_note": "indicative only, not significance-tested"`)
	require.Contains(t, string(doc), `"a1 ##[stop-commands]forged": {`, "the churn's figures by locale name the hostile locale")
	forgeRun(t, dir, 0, "report", "--from", jsonF, "--markdown", filepath.Join(dir, "churn-again.md"), "--verbose")
}

// hostileBatchProxy stands between a run and the llmtest stand-in of every
// batch API (OpenAI, Anthropic, Gemini) as a hostile server would: each
// batch's id and each of its non-final statuses carry a command in several
// syntaxes, as do the judge's reasons ("intent match ...") and the generated
// queries ("what does it say about ..."). The run's calls back with the id are
// mapped to the stand-in's.
func hostileBatchProxy(t *testing.T, target string) *httptest.Server {
	t.Helper()
	js := func(s string) []byte { b, _ := json.Marshal(s); return b }
	u, err := url.Parse(target)
	require.NoError(t, err)
	// An id is in a URL: Gemini's client puts it there unescaped, so Gemini's
	// holds no '#'.
	ids := map[string]string{
		"batch_fake1":    "batch_fake1 ##[error title=FORGED]i \u3000::warning title=FORGED::i",
		"msgbatch_fake1": "msgbatch_fake1 ##[error title=FORGED]i \u3000::warning title=FORGED::i",
		"batches/fake1":  "batches/fake1 \u3000::error title=FORGED::i \u0085::warning title=FORGED::i",
	}
	status := func(s string) string {
		return s + " ##[error title=FORGED]s\n\u3000::error title=FORGED::s \u2028::warning title=FORGED::s"
	}
	var replace [][2][]byte
	for real, hostile := range ids {
		replace = append(replace, [2][]byte{js(real), js(hostile)})
	}
	for _, s := range []string{"validating", "in_progress", "finalizing", "BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"} {
		replace = append(replace, [2][]byte{js(s), js(status(s))})
	}
	// Inside a JSON string at any depth (a Gemini answer is JSON in JSON):
	// no quote, backslash or control character.
	replace = append(replace,
		[2][]byte{[]byte("intent match"), []byte("intent ##[error title=FORGED]r \u3000::error title=FORGED::r match")},
		[2][]byte{[]byte("what does it say about"), []byte("what ##[error title=FORGED]q \u3000::error title=FORGED::q about")})
	var srv *httptest.Server
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			p := r.In.URL.Path
			for real, hostile := range ids {
				p = strings.ReplaceAll(p, hostile, real)
			}
			r.Out.URL.Path, r.Out.URL.RawPath = p, ""
			r.Out.Header.Del("Accept-Encoding")
		},
		ModifyResponse: func(resp *http.Response) error {
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			for _, r := range replace {
				data = bytes.ReplaceAll(data, r[0], r[1])
			}
			// A URL the stand-in gives (Anthropic's results_url) is the
			// proxy's: the client sends its headers to its own origin only.
			data = bytes.ReplaceAll(data, []byte(target), []byte(srv.URL))
			resp.Body = io.NopCloser(bytes.NewReader(data))
			resp.ContentLength = int64(len(data))
			resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
			return nil
		},
	}
	srv = httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv
}

// The batch log lines and summary lines carry what a server chose: its
// batch's id and status (judge's "batch ID: STATUS (n/m done, k failed)" and
// "submitted batch ID to PROVIDER", generate's "batch ID STATUS: ..."; the
// summary's "judge: batch (api, PROVIDER) ID" and "generate: batch ID
// STATUS"), through each batch API (OpenAI, Anthropic's Message Batches,
// Gemini's batch mode); the model's redacted reasons (b52f241a) and generated
// queries are kept in the run's files. A hostile server's ids and statuses in
// every syntax reach those lines, and its reasons the judgments file, inside
// Actions and outside; no line of any stream, the job summary or the outputs
// file is a command.
func TestNoForgedCommandBatchStatus(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	kbF := write("kb.jsonl", `{"id":"a","locale":"en","text":"alpha reset password"}`+"\n"+`{"id":"b","locale":"en","text":"beta billing invoice"}`+"\n")
	runF := write("run.jsonl", `{"id":"q1","query":"alpha password","retrieved":["a","b"]}`+"\n"+`{"id":"q2","query":"billing","retrieved":["b","a"]}`+"\n")
	for _, tc := range []struct{ name, api, line, summary string }{
		{"judge openai", "openai", "judge: batch batch_fake1 ", "judge: batch (api, openai) batch_fake1 "},
		{"judge anthropic", "anthropic", "judge: batch msgbatch_fake1 ", "judge: batch (api, anthropic) msgbatch_fake1 "},
		{"judge gemini", "gemini", "judge: batch batches/fake1 ", "judge: batch (api, gemini) batches/fake1 "},
		{"generate openai", "", "generate: batch batch_fake1 ", "generate: batch batch_fake1 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			// Outside Actions and inside, each run with a stand-in of its own
			// (so that each submits batch 1) and no cache of the other's.
			for _, inActions := range []bool{false, true} {
				// Two retrievals in each status: the first poll finds the
				// batch in progress.
				llm := llmtest.New(llmtest.Options{Batch: llmtest.BatchOptions{PollsPerStatus: 2}})
				t.Cleanup(llm.Close)
				srv := hostileBatchProxy(t, llm.URL)
				file := filepath.Join(dir, fmt.Sprintf("%s-%v.jsonl", name, inActions))
				args := []string{"generate", "--kb", kbF, "--out", file, "--generator-url", srv.URL, "--generator-model", "g", "--per-locale", "2",
					"--questions", "1", "--keywords", "1", "--batch", "--batch-poll", "10ms"}
				if tc.api != "" {
					args = []string{"judge", "--kb", kbF, "--run", "r=" + runF, "--k", "2", "--judge-url", srv.URL, "--judge-model", "fake",
						"--qrels", filepath.Join(dir, fmt.Sprintf("%s-%v.qrels", name, inActions)), "--judgments", file,
						"--cache", filepath.Join(dir, fmt.Sprintf("%s-%v.cache.jsonl", name, inActions)),
						"--batch", "--batch-api", tc.api, "--batch-poll", "10ms"}
				}
				texts := forgeRunOnce(t, inActions, args...)
				// A status line with the hostile id and status, and the
				// summary's line with the hostile id.
				assert.Positive(t, lineWith(texts["stderr"], tc.line, "::warning title=FORGED::i", "title=FORGED]s"), "the status line:\n%s", texts["stderr"])
				assert.Equal(t, 1, lineWith(texts["stdout"], tc.summary, "::warning title=FORGED::i"), "the summary's line:\n%s", texts["stdout"])
				data, err := os.ReadFile(file)
				require.NoError(t, err)
				if tc.api != "" {
					assert.Contains(t, string(data), "intent ##[error title=FORGED]r", "the model's reasons reach the judgments")
				} else {
					assert.Contains(t, string(data), "what ##[error title=FORGED]q", "the generated queries reach the cases")
				}
			}
		})
	}
}

// forgeRunOnce runs args once, outside Actions or inside, and reads what it
// printed as forgeRunData reads each of its two runs (exit 0, no forged
// command, no secret of forgeSecrets but in ::add-mask::); it returns the
// streams and, inside Actions, the job summary and the outputs file.
func forgeRunOnce(t *testing.T, inActions bool, args ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	var outputFile, summary string
	if inActions {
		env, outputFile, summary = actionsEnv(t, nil)
	}
	for k, v := range forgeSecrets {
		env[k] = v
	}
	code, stdout, stderr := runIn(t, env, args...)
	what := fmt.Sprintf("%s (actions %v)", strings.Join(args[:min(len(args), 3)], " "), inActions)
	require.Equal(t, 0, code, "%s: %s%s", what, stdout, stderr)
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	if inActions {
		for name, p := range map[string]string{"outputs file": outputFile, "job summary": summary} {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			texts[name] = string(b)
		}
	}
	for name, text := range texts {
		if name != "outputs file" { // paths the workflow gave, kept exact
			assertNoForgedCommand(t, what+" "+name, text)
		}
		var unmasked []string // the runner masks what ::add-mask:: names
		for _, l := range runnertest.Lines(text) {
			if !strings.HasPrefix(l, "::add-mask::") {
				unmasked = append(unmasked, l)
			}
		}
		for k, v := range forgeSecrets {
			assert.NotContains(t, strings.Join(unmasked, "\n"), v, "%s: %s: the value of %s", what, name, k)
		}
	}
	return texts
}

// A located input error names its file: `FILE:LINE: what is wrong` on
// standard error, and inside Actions the ::error:: annotation's file and the
// job summary's entry. A file, a shard or a shard's directory named with a
// command after a tab, U+2028, U+3000, U+0085, a line end, or in the legacy
// syntax reaches each of them for every input a command reads by lines
// (check's cases and their shards, knowledge base and baseline, compare's
// qrels and run, calibrate's human labels and judge scores, a saved report,
// import's input, retrieve's cases, a judge's run, generate's knowledge base)
// and forges none. The cases and their shards take every payload, the other
// inputs two each.
func TestNoForgedCommandFileNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n")
	casesF := write("cases.jsonl", `{"id":"ok","locale":"en","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n")
	runOK := write("ok.trec", "q1 Q0 a 1 0.9 x\n")
	qrelsOK := write("ok.qrels", "q1 0 a 1\n")
	bad := `{"id":"ok","must_cite_one_of":["a"],"retrieved":["a"]}` + "\n" + `{"id":"b",` + "\n" // malformed at line 2
	llm := httptest.NewServer(http.NotFoundHandler())
	defer llm.Close()
	located := regexp.MustCompile(`:2: `)
	label := `{"case_id":"c","dimension":"relevance","bin":1,"construct":"relevance-4-point","labeled_at":"2026-09-01T09:00:00Z"}`
	score := `{"case_id":"c","dimension":"relevance","score":0.5,"construct":"relevance-4-point","judged_at":"2026-10-01T09:00:00Z"}`
	judgeF := write("judge.jsonl", score+"\n")
	lockF := write("lock.json", `{"dimensions": {"relevance": {"construct": "relevance-4-point", "gated": true}}, "bins": [0.17, 0.5, 0.84], "kappa_weighting": "quadratic", "min_kappa": 0.6, "min_n": 2}`)
	// Each input by its args, its file named with the payload p (name is
	// p after a prefix of the test's own).
	inputs := []struct {
		what  string
		every bool
		args  func(i int, p, name string) []string
	}{
		{"cases", true, func(_ int, _, name string) []string {
			return []string{"check", "--cases", write(name+".jsonl", bad), "--kb", kbF, "--comment", "never"}
		}},
		{"a shard in a hostile directory", true, func(i int, p, _ string) []string {
			shards := fmt.Sprintf("s%d%s", i, p)
			write(filepath.Join(shards, "a.jsonl"), `{"id":"x","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n")
			write(filepath.Join(shards, "b"+p+".jsonl"), bad)
			return []string{"check", "--cases", filepath.Join(dir, shards), "--kb", kbF, "--comment", "never"}
		}},
		{"knowledge base", false, func(_ int, _, name string) []string {
			return []string{"check", "--cases", casesF, "--kb", write("kb"+name+".jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":`+"\n"), "--comment", "never"}
		}},
		{"baseline", false, func(_ int, _, name string) []string {
			return []string{"check", "--cases", casesF, "--kb", kbF, "--baseline", write("base"+name+".jsonl", `{"schema":"retrieval-gate/baseline@1"}`+"\n"+`{"id":`+"\n"), "--comment", "never"}
		}},
		{"qrels", false, func(_ int, _, name string) []string {
			return []string{"compare", "--qrels", write("q"+name+".qrels", "q1 0 a 1\nq2 0\n"), "--run", "a=" + runOK, "--comment", "never"}
		}},
		{"run", false, func(_ int, _, name string) []string {
			return []string{"compare", "--qrels", qrelsOK, "--run", "a=" + write("r"+name+".trec", "q1 Q0 a 1 0.9 x\nq1 Q0\n"), "--comment", "never"}
		}},
		{"human labels", false, func(_ int, _, name string) []string {
			return []string{"calibrate", "--human", write("h"+name+".jsonl", label+"\n"+`{"case_id":`+"\n"), "--judge", judgeF, "--lock", lockF, "--comment", "never"}
		}},
		{"judge scores", false, func(_ int, _, name string) []string {
			return []string{"calibrate", "--human", write("h2"+name+".jsonl", label+"\n"), "--judge", write("j"+name+".jsonl", score+"\n"+`{"case_id":`+"\n"), "--lock", lockF, "--comment", "never"}
		}},
		{"saved report", false, func(i int, _, name string) []string {
			return []string{"report", "--from", write("rep"+name+".json", "{\n\"schema\": 7}\n"), "--markdown", filepath.Join(dir, fmt.Sprintf("rep%d.md", i))}
		}},
		{"import input", false, func(_ int, _, name string) []string {
			return []string{"import", "--in", write("imp"+name+".jsonl", `{"query_id":"q","doc_id":"d","score":0.5}`+"\n"+`{"query_id":`+"\n"), "--out", "-"}
		}},
		{"retrieve cases", false, func(i int, _, name string) []string {
			return []string{"retrieve", "--cases", write("rc"+name+".jsonl", `{"id":"ok","query":"a","retrieved":["a"]}`+"\n"+`{"id":"b",`+"\n"), "--kb", kbF,
				"--out", filepath.Join(dir, fmt.Sprintf("rc%d.out.jsonl", i))}
		}},
		{"judge run", false, func(i int, _, name string) []string {
			return []string{"judge", "--kb", kbF, "--run", "r=" + write("jr"+name+".jsonl", `{"id":"q1","query":"alpha","retrieved":["a"]}`+"\n"+`{"id":"q2","query":"beta","retrieved":["zz"]}`+"\n"),
				"--k", "2", "--judge-url", llm.URL, "--judge-model", "fake", "--cache", "none", "--qrels", filepath.Join(dir, fmt.Sprintf("jr%d.qrels", i))}
		}},
		{"generate knowledge base", false, func(i int, _, name string) []string {
			return []string{"generate", "--kb", write("gk"+name+".jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":`+"\n"),
				"--batch-out", filepath.Join(dir, fmt.Sprintf("gk%d.req.jsonl", i)), "--generator-model", "g"}
		}},
	}
	for k, in := range inputs {
		for i, p := range nameForgePayloads {
			// --run takes one NAME=FILE a line (the Action input's list): no
			// file name holds a line end there.
			newline := strings.Contains(p, "\n") && (in.what == "run" || in.what == "judge run")
			if (!in.every && (i+k)%4 != 0) || newline {
				continue
			}
			args := in.args(i, p, fmt.Sprintf("f%d%s", i, p))
			t.Run(fmt.Sprintf("%s %d", in.what, i), func(t *testing.T) {
				outside, inside := forgeRunData(t, dir, 2, true, args...)
				// The error names the hostile file at line 2; inside Actions the
				// job summary's entry names it too.
				line := ""
				for l := range strings.Lines(outside["stderr"]) {
					if strings.HasPrefix(l, "retrieval-gate: ") && strings.Contains(l, "title=FORGED") && located.MatchString(l) {
						line = l
					}
				}
				assert.NotEmpty(t, line, "the located error names the file:\n%s", outside["stderr"])
				assert.Contains(t, inside["job summary"], "title=FORGED", "the job summary's entry")
				assert.Regexp(t, located, inside["job summary"])
			})
		}
	}
}

// report --from's refusals: --comment-key refuses a key it cannot carry
// (b445b6ea: a compare document's Markdown has no marker; without --markdown
// it would mark nothing), after the key's own check, so a key that forges a
// command is refused by its syntax and named in the refusal as given; and
// --verbose, check's alone (2a097075), names the document refused. Neither
// forges a command.
func TestNoForgedCommandReportRefusals(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	qrels := write("q.qrels", "q1 0 a 1\nq2 0 b 1\n")
	run := write("a.trec", "q1 Q0 a 1 0.9 x\nq2 Q0 b 1 0.9 x\n")
	cmp := filepath.Join(dir, "cmp.json")
	forgeRunData(t, dir, 0, false, "compare", "--qrels", qrels, "--run", "a="+run, "--bootstrap", "20", "--comment", "never", "--json", cmp)
	for i, key := range append(append([]string(nil), forgePayloads...), nameForgePayloads...) {
		for _, args := range [][]string{
			{"report", "--from", cmp, "--markdown", filepath.Join(dir, fmt.Sprintf("k%d.md", i)), "--comment-key", key},
			{"report", "--from", cmp, "--comment-key", key},
		} {
			outside, _ := forgeRunData(t, dir, 2, true, args...)
			assert.Equal(t, 1, lineWith(outside["stderr"], "retrieval-gate: report: --comment-key ", "FORGED", "must be 1 to 100 characters"), outside["stderr"])
		}
	}
	// The refusals that name no data say why, and forge nothing either.
	outside, _ := forgeRunData(t, dir, 2, false, "report", "--from", cmp, "--markdown", filepath.Join(dir, "k.md"), "--comment-key", "ok")
	assert.Contains(t, outside["stderr"], "a compare document's Markdown has no comment marker to carry a key")
	// --verbose names the compare document it refuses, a hostile file.
	data, err := os.ReadFile(cmp)
	require.NoError(t, err)
	for i, p := range nameForgePayloads {
		named := write(fmt.Sprintf("cmp%d%s.json", i, p), string(data))
		outside, _ = forgeRunData(t, dir, 2, true, "report", "--from", named, "--verbose")
		assert.Equal(t, 1, lineWith(outside["stderr"], "retrieval-gate: report: --verbose is check's", "title=FORGED", "is a compare report"), outside["stderr"])
	}
}

// The sticky PR comment (and the check run's summary, the same Markdown)
// carries the report with every hostile value: ids, locales, queries,
// integrity problems and, when the report is too long for a comment, the
// shortened rendering. Read as the runner reads a log (a later step may print
// it), no line of any comment is a command.
func TestNoForgedCommandPRComment(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":"b","text":"beta"}`+"\n")
	var cases, long, qrels, runA, runB strings.Builder
	for i, p := range append(append([]string(nil), forgePayloads...), nameForgePayloads...) {
		fmt.Fprintf(&cases, `{"id":%s,"locale":%s,"type":%s,"query":%s,"must_cite_one_of":[%s],"retrieved":["b",%s]}`+"\n",
			js(fmt.Sprintf("c%d %s", i, p)), js(p), js(p), js(p), js("a"), js(p))
		fmt.Fprintf(&cases, `{"id":%s,"locale":"en","must_cite_one_of":[%s],"retrieved":["a"]}`+"\n", js(fmt.Sprintf("g%d %s", i, p)), js(p))
		qid := strings.NewReplacer(" ", "", "\n", "", "\t", "", "\r", "").Replace(p)
		fmt.Fprintf(&qrels, `{"query_id":%s,"doc_id":"a","relevance":1}`+"\n", js(fmt.Sprintf("q%d%s", i, qid)))
		fmt.Fprintf(&runA, "q%d%s Q0 a 1 0.9 a\n", i, qid)
		fmt.Fprintf(&runB, "q%d%s Q0 b 1 0.9 b\n", i, qid)
	}
	// Enough missed cases with long hostile ids that the comment is cut to
	// its 65,536 characters and rendered again shorter.
	for i := range 600 {
		p := forgePayloads[i%len(forgePayloads)]
		fmt.Fprintf(&long, `{"id":%s,"locale":%s,"query":%s,"must_cite_one_of":["a"],"retrieved":["b"]}`+"\n",
			js(fmt.Sprintf("m%d %s %s", i, strings.Repeat("x", 80), p)), js(p), js(p))
	}
	casesF, longF := write("cases.jsonl", cases.String()), write("long.jsonl", long.String())
	qrelsF, aF, bF := write("qrels.jsonl", qrels.String()), write("a.trec", runA.String()), write("b.trec", runB.String())
	srv := githubtestNew(t)
	event := write("event.json", `{"number":7,"pull_request":{"number":7,"head":{"repo":{"full_name":"octo/repo"},"sha":"0123456789abcdef0123456789abcdef01234567"},"base":{"repo":{"full_name":"octo/repo"}}}}`)
	for _, args := range [][]string{
		{"check", "--cases", casesF, "--kb", kbF, "--comment-key", "c1"},
		{"check", "--cases", longF, "--kb", kbF, "--comment-key", "c2"},
		{"compare", "--qrels", qrelsF, "--run", "a=" + aF, "--run", "b=" + bF, "--bootstrap", "20", "--gate-strategy", "a", "--fail-if-beaten"},
	} {
		env, _, _ := actionsEnv(t, nil)
		env["GITHUB_API_URL"], env["GITHUB_EVENT_NAME"], env["GITHUB_EVENT_PATH"] = srv.APIURL(), "pull_request", event
		env["GITHUB_SHA"], env["GITHUB_TOKEN"] = "0123456789abcdef0123456789abcdef01234567", "ghs_forgecomment1234"
		code, stdout, stderr := runIn(t, env, append(args, "--comment", "always")...)
		require.Contains(t, []int{0, 1}, code, stdout+stderr)
		assert.Contains(t, stderr, "PR comment created", "%v: %s", args, stderr)
		assertNoForgedCommand(t, args[0]+" stdout", stdout)
		assertNoForgedCommand(t, args[0]+" stderr", stderr)
	}
	comments := srv.Comments(7)
	require.Len(t, comments, 3)
	shortened := false
	for _, c := range comments {
		assert.Contains(t, c.Body, "FORGED", "the hostile data reached the comment")
		assertNoForgedCommand(t, "PR comment "+strings.SplitN(c.Body, "\n", 2)[0], c.Body)
		shortened = shortened || strings.Contains(c.Body, "This comment was shortened")
	}
	assert.True(t, shortened, "one comment was cut to its limit and rendered again")
	runs := srv.CheckRuns()
	require.NotEmpty(t, runs, "check runs")
	for _, r := range runs {
		assertNoForgedCommand(t, "check run "+r.Name+" summary", r.Summary)
		assertNoForgedCommand(t, "check run "+r.Name+" title", r.Title)
	}
}

// The trend of --history (the terminal report's "trend" lines and the
// Markdown's "Trend" table, which the job summary and the PR comment carry)
// names each gated group over the runs recorded: a per-locale floor on a
// hostile locale reaches both, with the cases' hostile ids, inside Actions and
// outside; no line of them is a command. report --history draws the page and
// prints its line.
func TestNoForgedCommandTrend(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbF := write("kb.jsonl", `{"id":"d0","text":"alpha"}`+"\n"+`{"id":"d1","text":"beta"}`+"\n")
	var good, bad strings.Builder
	for rep := range 2 {
		for i, p := range forgePayloads {
			line := `{"id":%s,"locale":%s,"query":%s,"must_cite_one_of":["d0"],"retrieved":[%s]}` + "\n"
			fmt.Fprintf(&good, line, js(fmt.Sprintf("c%d-%d %s", i, rep, p)), js(p), js(p), `"d0"`)
			fmt.Fprintf(&bad, line, js(fmt.Sprintf("c%d-%d %s", i, rep, p)), js(p), js(p), `"d1"`)
		}
	}
	goodF, badF := write("good.jsonl", good.String()), write("bad.jsonl", bad.String())
	hist := filepath.Join(dir, "history.jsonl")
	floor := "retrieval_hit_at_k@locale:" + forgePayloads[0] + "=0.1" // a1 ##[stop-commands]FORGED
	md := filepath.Join(dir, "trend.md")
	for _, cases := range []string{goodF, badF} {
		forgeRun(t, dir, -1, "check", "--cases", cases, "--kb", kbF, "--history", hist, "--floors", floor, "--comment", "never")
	}
	outside, inside := forgeRunData(t, dir, 0, true, "check", "--cases", goodF, "--kb", kbF, "--history", hist, "--floors", floor, "--comment", "never", "--markdown", md)
	for name, texts := range map[string]map[string]string{"outside Actions": outside, "inside Actions": inside} {
		assert.Equal(t, 1, lineWith(texts["stdout"], "  hit@5 locale: a1 ##\\[stop-commands]forged: ", "→"), "%s: the trend's line:\n%s", name, texts["stdout"])
	}
	data, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(data), "| hit@5 | locale: a1 &#35;&#8203;&#35;&#8203;\\[stop-commands\\]forged |", "the Markdown's trend row")
	assert.Contains(t, inside["job summary"], "| hit@5 | locale: a1 &#35;&#8203;&#35;&#8203;\\[stop-commands\\]forged |", "the job summary's trend row")
	forgeRunData(t, dir, 0, false, "report", "--history", hist, "--html", filepath.Join(dir, "trend.html"))
}

// Parquet cases (read by rows, casefile's fast path, or as the lines their
// columns spell): the ids, locales, types and queries of the rows reach the
// reports, a shard's file name reaches the located errors ("SHARD:N: ..."),
// and a duplicate id across two hostile shards names both; none forges a
// command, inside Actions or outside.
func TestNoForgedCommandParquet(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":"b","text":"beta"}`+"\n")
	str := func(s string) *string { return &s }
	var rows []rowsCase
	for i, p := range append(append([]string(nil), forgePayloads...), nameForgePayloads...) {
		rows = append(rows, rowsCase{ID: fmt.Sprintf("c%d %s", i, p), Locale: str(p), Type: str(p), Query: str(p), Gold: []string{"a"},
			Retrieved: []rowsEntry{{ID: "b"}, {ID: p}}})
	}
	pq := filepath.Join(dir, "pq"+nameForgePayloads[2])
	require.NoError(t, os.MkdirAll(pq, 0o755))
	writeParquetRows(t, filepath.Join(pq, "part"+nameForgePayloads[0]+".parquet"), rows)
	outside, _ := forgeRunData(t, dir, 0, true, "check", "--cases", pq, "--kb", kbF, "--comment", "never", "--verbose", "--markdown", filepath.Join(dir, "pq.md"))
	assert.Positive(t, lineWith(outside["stdout"], "  ", "title=FORGED", ".parquet:"), "a missed case named at its shard and row:\n%s", outside["stdout"])

	// The same id in two shards named with commands.
	dup := filepath.Join(dir, "dup"+nameForgePayloads[6])
	require.NoError(t, os.MkdirAll(dup, 0o755))
	for i, p := range []string{nameForgePayloads[4], nameForgePayloads[6]} {
		writeParquetRows(t, filepath.Join(dup, fmt.Sprintf("%d%s.parquet", i, p)), rows[:2])
	}
	outside, inside := forgeRunData(t, dir, 2, true, "check", "--cases", dup, "--kb", kbF, "--comment", "never")
	assert.Equal(t, 1, lineWith(outside["stderr"], "retrieval-gate: ", "title=FORGED", "0\\n::error title=FORGED::x.parquet", "1 ##\\[error title=FORGED]x.parquet"), "the duplicate's error names both shards:\n%s", outside["stderr"])
	assert.Contains(t, inside["job summary"], "title=FORGED")
}

// check --baseline auto: what the artifact holds is data (ciartifact,
// 10750bd8, and the artifact's reading, 84c2791d): an archive without the
// baseline file is named by the entries it holds, a baseline file of another
// schema by that schema. Entries and a schema that carry a command in every
// syntax reach the warning that there is no baseline, the terminal report,
// the Markdown report and the job summary, and forge nothing.
func TestNoForgedCommandBaselineArtifact(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n")
	casesF := write("cases.jsonl", `{"id":"c","locale":"en","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n")
	event := write("event.json", `{"number":7,"pull_request":{"number":7,"base":{"ref":"main","repo":{"full_name":"octo/repo"}},"head":{"ref":"feature","repo":{"full_name":"octo/repo"}}}}`)
	zipOf := func(files map[string][]byte) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for name, data := range files {
			w, err := zw.Create(name)
			require.NoError(t, err)
			_, err = w.Write(data)
			require.NoError(t, err)
		}
		require.NoError(t, zw.Close())
		return b.Bytes()
	}
	gz := func(text string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, err := zw.Write([]byte(text))
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		return b.Bytes()
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	entries := map[string][]byte{}
	for i, p := range append(append([]string(nil), forgePayloads[:4]...), nameForgePayloads[:4]...) {
		entries[fmt.Sprintf("e%d %s", i, p)] = []byte("x")
	}
	for _, tc := range []struct {
		what string
		zip  []byte
	}{
		{"entries", zipOf(entries)},
		{"schema", zipOf(map[string][]byte{"baseline.jsonl.gz": gz(`{"schema":` + js(strings.Join(forgePayloads, " ")) + `}` + "\n")})},
	} {
		t.Run(tc.what, func(t *testing.T) {
			srv := githubtestNew(t)
			run := srv.AddRun(githubtest.Run{Name: "retrieval", HeadBranch: "main", HeadSHA: "0123456789abcdef0123456789abcdef01234567", Event: "push", Status: "completed", Conclusion: "success"})
			srv.AddArtifact(githubtest.Artifact{Name: "retrieval-gate-baseline-default", RunID: run, Zip: tc.zip})
			env, _, summary := actionsEnv(t, nil)
			env["GITHUB_API_URL"], env["GITHUB_EVENT_NAME"], env["GITHUB_EVENT_PATH"] = srv.APIURL(), "pull_request", event
			env["GITHUB_TOKEN"] = forgeSecrets["GITHUB_TOKEN"]
			md := filepath.Join(dir, tc.what+".md")
			code, stdout, stderr := runIn(t, env, "check", "--cases", casesF, "--kb", kbF, "--baseline", "auto", "--comment", "never", "--markdown", md)
			require.Equal(t, 0, code, stdout+stderr)
			sum, err := os.ReadFile(summary)
			require.NoError(t, err)
			data, err := os.ReadFile(md)
			require.NoError(t, err)
			assert.Positive(t, lineWith(stdout+stderr, "", "no baseline", "FORGED"), "the reason names the artifact's data:\n%s%s", stdout, stderr)
			if os.Getenv("FORGE_SHOW") != "" {
				t.Logf("%s\n%s", stdout, stderr)
			}
			assert.Contains(t, string(sum), "FORGED")
			for name, text := range map[string]string{"stdout": stdout, "stderr": stderr, "job summary": string(sum), "Markdown": string(data)} {
				assertNoForgedCommand(t, tc.what+" "+name, text)
				masked := regexp.MustCompile(`(?m)^::add-mask::.*$`).ReplaceAllString(text, "") // the runner masks what it names
				assert.NotContains(t, masked, forgeSecrets["GITHUB_TOKEN"], name)
			}
		})
	}
}
