package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// forgeSecrets are the credentials every run below has in its environment; none
// may reach a stream, the job summary, the outputs file or a file written.
var forgeSecrets = map[string]string{
	"OPENAI_API_KEY": "sk-forge-secret-openai-7f3a",
	"CHROMA_API_KEY": "ck-forge-secret-chroma-9b2c",
	"GITHUB_TOKEN":   "ghs_forgesecretgithub5d1e",
}

// forgeFlagKey is a Chroma key given on the command line (--chroma-api-key),
// which forgeRun also looks for.
const forgeFlagKey = "ck-forge-secret-flag-4e8d"

// forgeRun runs args in dir, outside Actions and inside (GITHUB_ACTIONS=true,
// with an outputs file and a job summary), and reads as the runner does every
// stream and both files; no secret of forgeSecrets may appear in them or in any
// file under dir that the run wrote. want is the exit code (-1: any).
func forgeRun(t *testing.T, dir string, want int, args ...string) {
	t.Helper()
	forgeRunData(t, dir, want, true, args...)
}

// forgeRunData is forgeRun; withData says the hostile data must reach an output
// (else the test would prove nothing); a run that fails before it reads the
// data, to test the secrets, sets it false. It returns what each run printed
// (stdout, stderr; inside Actions also the job summary and the outputs file),
// for a caller that checks where the data reached.
func forgeRunData(t *testing.T, dir string, want int, withData bool, args ...string) (outside, inside map[string]string) {
	t.Helper()
	reached := false
	for _, inActions := range []bool{false, true} {
		env := map[string]string{}
		var outputFile, summary string
		if inActions {
			env, outputFile, summary = actionsEnv(t, nil)
		}
		for k, v := range forgeSecrets {
			env[k] = v
		}
		before := snapshot(t, dir)
		code, stdout, stderr := runIn(t, env, args...)
		what := fmt.Sprintf("%s (actions %v)", strings.Join(args[:min(len(args), 3)], " "), inActions)
		if want >= 0 {
			// The test must not pass because the hostile input was refused.
			require.Equal(t, want, code, "%s: %s%s", what, stdout, stderr)
		}
		texts := map[string]string{"stdout": stdout, "stderr": stderr}
		if inActions {
			for name, p := range map[string]string{"outputs file": outputFile, "job summary": summary} {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				texts[name] = string(b)
			}
			inside = maps.Clone(texts)
		} else {
			outside = maps.Clone(texts)
		}
		for name, text := range texts {
			if name == "outputs file" {
				// An output that is a path or a name the workflow gave (--json FILE,
				// evaluate's --out DIR, compare's recommended NAME of --run
				// NAME=FILE) is kept exact, for the steps that read it; no value
				// from the input files may carry a command.
				var kept []string
				for _, l := range runnertest.Lines(text) {
					if !strings.HasPrefix(l, dir) && !slices.ContainsFunc(args, func(a string) bool { return a == l || strings.HasPrefix(a, l+"=") }) {
						kept = append(kept, l)
					}
				}
				text = strings.Join(kept, "\n")
			}
			assertNoForgedCommand(t, what+" "+name, text)
		}
		reached = reached || hasForged(stdout+stderr+texts["job summary"])
		if os.Getenv("FORGE_SHOW") != "" { // to read what each run printed: FORGE_SHOW=1 go test -v -run NoForged
			t.Logf("%s:\n%s\n%s\njob summary (%d bytes, FORGED %d times)", what, stdout, stderr, len(texts["job summary"]), strings.Count(texts["job summary"], "FORGED"))
		}
		// The runner masks what ::add-mask:: names: that line is the mask, not a
		// leak. It reads it on either stream (import --out - writes its
		// workflow commands to stderr: its stdout is the converted file).
		for name, stream := range map[string]string{"stdout": stdout, "stderr": stderr} {
			var unmasked []string
			for _, l := range runnertest.Lines(stream) {
				if !strings.HasPrefix(l, "::add-mask::") {
					unmasked = append(unmasked, l)
				}
			}
			texts[name] = strings.Join(unmasked, "\n")
		}
		for p, data := range written(t, dir, before) {
			texts["file "+p] = data
			if strings.HasSuffix(p, ".md") {
				reached = reached || hasForged(data)
				// A Markdown report is often shown in the log (cat out.md) or
				// appended to the job summary by a later step.
				assertNoForgedCommand(t, what+" "+p, data)
			}
		}
		for name, text := range texts {
			for k, v := range forgeSecrets {
				assert.NotContains(t, text, v, "%s: %s: the value of %s", what, name, k)
			}
			assert.NotContains(t, text, forgeFlagKey, "%s: %s: the value of --chroma-api-key", what, name)
		}
	}
	assert.True(t, reached || !withData, "%v: no hostile data reached an output: the test proves nothing", args)
	return outside, inside
}

// hasForged reports whether text holds a payload's FORGED, in any case: a
// locale is lowercased as it is read, and is hostile data all the same.
func hasForged(text string) bool { return strings.Contains(strings.ToUpper(text), "FORGED") }

// fileWriter returns write(name, text): the file name under dir (its directories
// made) holding text; it returns the file's path.
func fileWriter(t *testing.T, dir string) func(name, text string) string {
	return func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
}

// snapshot is every regular file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}

// written is the files under dir that are new or changed since before.
func written(t *testing.T, dir string, before map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, data := range snapshot(t, dir) {
		if old, ok := before[p]; !ok || old != data {
			out[p] = data
		}
	}
	return out
}

// Issue 20 items 1 and 2 for the outputs added since: check --baseline's
// rank-biased overlap lists and headline, its churn gates' list of the most
// changed cases, check --suggest-floors, compare
// --human-qrels (PPI++ section, scenarios, recommendation), compare --queries
// (the best and worst queries' texts), judge --human-sample
// --human-sheet, calibrate --human-sheet --judge-qrels, calibrate's rater panel
// and adjudications, generate --batch-out / --batch-in and evaluate --batch: ids,
// queries, locales, rater ids and file names carrying forged commands in every
// syntax the runner reads reach each of them, inside Actions and outside, and no
// line of stdout, stderr, the job summary or the outputs file is a command; no
// secret of the environment reaches any of them or a file written.
func TestNoForgedCommandNewOutputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	// A TREC line holds no ASCII white space: its query ids without it.
	qidOf := func(p string) string { return strings.NewReplacer(" ", "", "\n", "").Replace(p) }
	hostileFile := "x ##[error title=FORGED]x"

	// The KB: plain card ids (the gold of every case), hostile locales and text.
	var kb strings.Builder
	for i, p := range forgePayloads {
		fmt.Fprintf(&kb, `{"id":"d%d","locale":%s,"title":%s,"text":%s}`+"\n", i, js(p), js("card "+p), js(fmt.Sprintf("alpha beta %d %s", i, p)))
	}
	kbF := write("kb.jsonl", kb.String())

	t.Run("check baseline and suggest-floors", func(t *testing.T) {
		// The baseline run finds every gold card first; this run finds half of
		// them lower or not at all, and lists other cards: a headline with a drop,
		// changed top-k lists (RBO), newly missed cases, some without gold.
		var base, run strings.Builder
		n := len(forgePayloads)
		for rep := range 3 {
			for i, p := range forgePayloads {
				id := fmt.Sprintf("c%d-%d %s", i, rep, p)
				gold := fmt.Sprintf(`"must_cite_one_of":["d%d"],`, i)
				if rep == 2 {
					gold = "" // without gold: RBO only
				}
				other := fmt.Sprintf("d%d", (i+1)%n)
				fmt.Fprintf(&base, `{"id":%s,"locale":%s,"type":%s,"query":%s,%s"retrieved":["d%d",%q]}`+"\n", js(id), js(p), js(p), js(p), gold, i, other)
				retrieved := fmt.Sprintf(`["d%d",%q]`, i, other)
				if (i+rep)%2 == 0 {
					retrieved = fmt.Sprintf(`[%q,"d%d"]`, other, (i+2)%n)
				}
				fmt.Fprintf(&run, `{"id":%s,"locale":%s,"type":%s,"query":%s,%s"retrieved":%s}`+"\n", js(id), js(p), js(p), js(p), gold, retrieved)
			}
		}
		baseCases, runCases := write("base-cases.jsonl", base.String()), write("run-cases.jsonl", run.String())
		baseline := filepath.Join(dir, "base "+hostileFile+".jsonl")
		forgeRun(t, dir, 0, "check", "--cases", baseCases, "--kb", kbF, "--k", "2", "--write-baseline", baseline, "--comment", "never")
		forgeRun(t, dir, -1, "check", "--cases", runCases, "--kb", kbF, "--k", "2", "--baseline", baseline, "--comment", "never",
			"--markdown", filepath.Join(dir, "c "+hostileFile+".md"), "--json", filepath.Join(dir, "c.json"), "--suggest-floors")
		forgeRun(t, dir, -1, "check", "--cases", runCases, "--kb", kbF, "--k", "2", "--baseline", baseline, "--comment", "never",
			"--max-drop-hit", "0.01", "--suggest-floors")
		// The churn gates list the most changed cases (ids, queries, top k) in
		// every report (issue 35 item 1).
		forgeRun(t, dir, -1, "check", "--cases", runCases, "--kb", kbF, "--k", "2", "--baseline", baseline, "--comment", "never",
			"--max-churn", "0", "--min-rbo", "0.99", "--markdown", filepath.Join(dir, "churn "+hostileFile+".md"), "--html", filepath.Join(dir, "churn.html"))
		// The baseline's header is data too (its commit, its cases file), shown
		// in the headline's provenance.
		bf, err := os.Open(baseline)
		require.NoError(t, err)
		zr, err := gzip.NewReader(bf)
		require.NoError(t, err)
		data, err := io.ReadAll(zr)
		require.NoError(t, err)
		require.NoError(t, bf.Close())
		head, rest, ok := strings.Cut(string(data), "\n")
		require.True(t, ok)
		var hdr map[string]any
		require.NoError(t, json.Unmarshal([]byte(head), &hdr))
		require.Contains(t, hdr, "created_at")
		// A commit is shown in its first 12 characters: "##[add-mask]" exactly.
		hdr["commit"], hdr["cases_file"] = "##[add-mask]FORGED", forgePayloads[0]
		b, err := json.Marshal(hdr)
		require.NoError(t, err)
		forged := write("forged-header.jsonl", string(b)+"\n"+rest)
		forgeRun(t, dir, -1, "check", "--cases", runCases, "--kb", kbF, "--k", "2", "--baseline", forged, "--comment", "never",
			"--markdown", filepath.Join(dir, "c-header.md"))
		// The saved report rendered again: the same sections from the JSON.
		forgeRun(t, dir, 0, "report", "--from", filepath.Join(dir, "c.json"), "--markdown", filepath.Join(dir, "c-again.md"))
	})

	// The judge's pool: two strategies' runs over hostile query ids, locales and
	// queries (query ids without white space: they go into TREC qrels).
	var dense, lexical strings.Builder
	n := len(forgePayloads)
	for i, p := range forgePayloads {
		q := qidOf(p)
		fmt.Fprintf(&dense, `{"id":%s,"locale":%s,"query":%s,"retrieved":["d%d","d%d"]}`+"\n", js(fmt.Sprintf("q%d%s", i, q)), js(p), js("alpha "+p), i, (i+1)%n)
		fmt.Fprintf(&lexical, `{"id":%s,"locale":%s,"query":%s,"retrieved":["d%d","d%d"]}`+"\n", js(fmt.Sprintf("q%d%s", i, q)), js(p), js("alpha "+p), (i+1)%n, i)
	}
	denseF, lexicalF := write("dense.jsonl", dense.String()), write("lexical.jsonl", lexical.String())
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	judged := filepath.Join(dir, "judged.qrels")
	sheetBase := filepath.Join(dir, "sheet "+hostileFile)

	t.Run("judge human-sample", func(t *testing.T) {
		forgeRun(t, dir, 0, "judge", "--kb", kbF, "--run", "dense="+denseF, "--run", "lexical="+lexicalF, "--k", "2",
			"--judge-url", llm.URL, "--judge-model", "fake", "--cache", "none", "--qrels", judged,
			"--human-sample", "6", "--human-sheet", sheetBase)
		_, err := os.Stat(sheetBase + ".csv")
		require.NoError(t, err)
	})

	// The sheet as people fill it in: every row of the drawn sample graded.
	filled := filepath.Join(dir, "filled "+hostileFile+".csv")
	{
		f, err := os.Open(sheetBase + ".csv")
		require.NoError(t, err)
		rows, err := csv.NewReader(f).ReadAll()
		require.NoError(t, f.Close())
		require.NoError(t, err)
		require.Greater(t, len(rows), 2)
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		require.NoError(t, w.Write([]string{"query_id", "doc_id", "grade"}))
		for i, r := range rows[1:] {
			require.NoError(t, w.Write([]string{r[0], r[3], fmt.Sprint(i % 4)}))
		}
		w.Flush()
		write(filepath.Base(filled), b.String())
	}

	t.Run("compare human-qrels", func(t *testing.T) {
		forgeRun(t, dir, -1, "compare", "--qrels", judged, "--run", forgePayloads[0]+"="+denseF, "--run", forgePayloads[5]+"="+lexicalF, "--k", "2",
			"--human-qrels", filled, "--bootstrap", "50", "--comment", "never",
			"--markdown", filepath.Join(dir, "cmp.md"), "--json", filepath.Join(dir, "cmp.json"))
		forgeRun(t, dir, -1, "compare", "--qrels", judged, "--run", "dense="+denseF, "--run", "lexical="+lexicalF, "--k", "2",
			"--human-qrels", filled, "--bootstrap", "50", "--comment", "never", "--gate-strategy", "dense", "--fail-if-beaten")
		forgeRun(t, dir, 0, "report", "--from", filepath.Join(dir, "cmp.json"), "--markdown", filepath.Join(dir, "cmp-again.md"))
		// With the queries' locales (--queries), the corrected estimates are
		// stratified by locale: each hostile locale names its stratum in the
		// text, the Markdown and the job summary.
		strata := filepath.Join(dir, "cmp-strata.md")
		outside, inside := forgeRunData(t, dir, -1, true, "compare", "--qrels", judged, "--run", "dense="+denseF, "--run", "lexical="+lexicalF, "--k", "2",
			"--human-qrels", filled, "--queries", denseF, "--bootstrap", "50", "--comment", "never", "--markdown", strata)
		data, err := os.ReadFile(strata)
		require.NoError(t, err)
		assert.Contains(t, string(data), "by locale</summary>", "the corrected estimates by locale")
		assert.Contains(t, outside["stdout"], "by locale:", "the corrected estimates by locale")
		assert.Contains(t, inside["job summary"], "by locale</summary>")
	})

	// compare --queries (issue 32 item 4): the best and worst queries with
	// their hostile texts in the Markdown, the HTML, the JSON and the
	// report rendered again from it.
	t.Run("compare queries", func(t *testing.T) {
		forgeRun(t, dir, 0, "compare", "--qrels", judged, "--run", "dense="+denseF, "--run", "lexical="+lexicalF, "--k", "2",
			"--queries", denseF, "--bootstrap", "50", "--comment", "never", "--markdown", filepath.Join(dir, "cmpq.md"),
			"--json", filepath.Join(dir, "cmpq.json"), "--html", filepath.Join(dir, "cmpq.html"))
		b, err := os.ReadFile(filepath.Join(dir, "cmpq.json"))
		require.NoError(t, err)
		require.Contains(t, string(b), `"query_texts": {`, "the texts reached the report")
		forgeRun(t, dir, 0, "report", "--from", filepath.Join(dir, "cmpq.json"), "--markdown", filepath.Join(dir, "cmpq-again.md"))
	})

	t.Run("calibrate human-sheet", func(t *testing.T) {
		lock := write("sheet-lock.json", `{"dimensions": {"relevance": {"construct": "relevance-4-point", "gated": true}},
 "bins": [0.17, 0.5, 0.84], "kappa_weighting": "quadratic", "min_kappa": 0.6, "min_n": 2}`)
		forgeRun(t, dir, -1, "calibrate", "--human-sheet", filled, "--judge-qrels", judged, "--lock", lock, "--bootstrap", "0", "--comment", "never",
			"--markdown", filepath.Join(dir, "cal-sheet.md"))
	})

	t.Run("calibrate panel", func(t *testing.T) {
		lock := write("panel-lock.json", `{"dimensions": {"faithfulness": {"construct": "contradiction-only", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.2, "min_n": 2, "raters": "panel"}`)
		var human, judge strings.Builder
		label := func(id, rater string, bin int, extra string) {
			// A rater id in its normal form (a format or control character in one is
			// refused at its line): the payloads keep their "::" and "##[".
			rater = labelfile.NormalRaterID(rater)
			fmt.Fprintf(&human, `{"case_id":%s,"dimension":"faithfulness","bin":%d,"construct":"contradiction-only","labeled_at":"2026-09-01T09:00:00Z","rater":%s%s}`+"\n", js(id), bin, js(rater), extra)
		}
		owned := strings.Builder{} // the same panel, adjudicated by the lock's owner
		for i, p := range forgePayloads {
			id := fmt.Sprintf("c%d %s", i, p)
			label(id, "ana "+p, 0, "")
			label(id, "bo "+p, 1+i%2, "")
			if i%2 == 0 {
				label(id, "owner "+p, 1, `,"adjudication":true`) // between the panel's bins
			}
			fmt.Fprintf(&judge, `{"case_id":%s,"dimension":"faithfulness","score":%.2f,"construct":"contradiction-only","judged_at":"2026-10-01T09:00:00Z"}`+"\n", js(id), float64(i%3)/2)
		}
		for _, line := range strings.SplitAfter(human.String(), "\n") {
			if strings.Contains(line, `"adjudication":true`) {
				line = line[:strings.Index(line, `"rater":`)] + `"rater":` + js("owner "+forgePayloads[3]) + `,"adjudication":true}` + "\n"
			}
			owned.WriteString(line)
		}
		humanF, judgeF := write("panel-human.jsonl", human.String()), write("panel-judge.jsonl", judge.String())
		forgeRun(t, dir, -1, "calibrate", "--human", humanF, "--judge", judgeF, "--lock", lock, "--comment", "never",
			"--markdown", filepath.Join(dir, "cal-panel.md"), "--json", filepath.Join(dir, "cal-panel.json"))
		forgeRun(t, dir, 0, "report", "--from", filepath.Join(dir, "cal-panel.json"), "--markdown", filepath.Join(dir, "cal-panel-again.md"))
		// The lock's owner, its panel adoption's reason and a construct's definition are text too.
		all := strings.Join(forgePayloads, " ")
		adopted := write("adopted-lock.json", `{"dimensions": {"faithfulness": {"construct": "contradiction-only", "gated": true, "definition": `+js(all)+`}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.2, "min_n": 2, "raters": "panel", "owner": `+js("owner "+forgePayloads[3])+`,
 "panel_adoption": {"reason": `+js(all)+`}}`)
		ownedF := write("owned-human.jsonl", owned.String())
		forgeRun(t, dir, -1, "calibrate", "--human", ownedF, "--judge", judgeF, "--lock", adopted, "--comment", "never",
			"--markdown", filepath.Join(dir, "cal-adopted.md"), "--json", filepath.Join(dir, "cal-adopted.json"))
		forgeRun(t, dir, 0, "report", "--from", filepath.Join(dir, "cal-adopted.json"), "--markdown", filepath.Join(dir, "cal-adopted-again.md"))
	})

	t.Run("generate batch files", func(t *testing.T) {
		requests := filepath.Join(dir, "req "+hostileFile+".jsonl")
		forgeRun(t, dir, 0, "generate", "--kb", kbF, "--batch-out", requests, "--per-locale", "1", "--generator-model", "gen-1", "--questions", "1", "--keywords", "1")
		// The engine's results: hostile questions, a hostile error message, an
		// answer that is no JSON object, a line with no answer.
		f, err := os.Open(requests)
		require.NoError(t, err)
		var results strings.Builder
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		i := 0
		for sc.Scan() {
			var req struct {
				CustomID string `json:"custom_id"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &req))
			p := forgePayloads[i%len(forgePayloads)]
			switch i % 3 {
			case 0:
				content, _ := json.Marshal(map[string][]string{"questions": {"what is " + p + "?"}, "keywords": {p}})
				body, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "gen-1",
					"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}}})
				fmt.Fprintf(&results, `{"id":"r%d","custom_id":%s,"response":{"status_code":200,"request_id":"x","body":%s}}`+"\n", i, js(req.CustomID), body)
			case 1:
				fmt.Fprintf(&results, `{"id":"r%d","custom_id":%s,"response":{"status_code":500,"request_id":"x","body":{"error":{"message":%s}}}}`+"\n", i, js(req.CustomID), js(p))
			default:
				fmt.Fprintf(&results, `{"id":"r%d","custom_id":%s,"response":null,"error":{"code":%s,"message":%s}}`+"\n", i, js(req.CustomID), js(p), js(p))
			}
			i++
		}
		require.NoError(t, sc.Err())
		require.NoError(t, f.Close())
		require.Positive(t, i)
		resultsF := write("results "+hostileFile+".jsonl", results.String())
		forgeRun(t, dir, -1, "generate", "--kb", kbF, "--batch-in", resultsF, "--out", filepath.Join(dir, "gen "+hostileFile+".jsonl"),
			"--per-locale", "1", "--generator-model", "gen-1", "--questions", "1", "--keywords", "1")
		// An unknown custom_id that forges a command: refused at its line.
		bad := write("bad-results.jsonl", `{"id":"r","custom_id":`+js("gen-"+forgePayloads[0])+`,"response":null,"error":{"code":"x","message":"y"}}`+"\n")
		forgeRun(t, dir, 2, "generate", "--kb", kbF, "--batch-in", bad, "--out", filepath.Join(dir, "gen-bad.jsonl"),
			"--per-locale", "1", "--generator-model", "gen-1")
	})

	t.Run("evaluate batch", func(t *testing.T) {
		forgeRun(t, dir, -1, "evaluate", "--kb", kbF, "--out", filepath.Join(dir, "eval "+hostileFile), "--judge-url", llm.URL,
			"--judge-model", "fake", "--per-locale", "1", "--k", "2", "--bootstrap", "50", "--batch", "--batch-poll", "10ms")
	})

	// A server that echoes the credentials it was sent in its error body (as
	// some do): the judge's key (OPENAI_API_KEY) and Chroma's (--chroma-api-key)
	// reach neither the new outputs nor the stages' command lines (stages.txt).
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		msg := "Incorrect API key provided: " + r.Header.Get("Authorization") + " " + r.Header.Get("X-Chroma-Token") + " " + r.URL.Path
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}, "detail": msg})
	}))
	defer echo.Close()
	t.Run("secrets echoed by a server", func(t *testing.T) {
		forgeRunData(t, dir, 2, false, "judge", "--kb", kbF, "--run", forgePayloads[0]+"="+denseF, "--k", "2",
			"--judge-url", echo.URL, "--judge-model", "fake", "--cache", "none", "--qrels", filepath.Join(dir, "echo.qrels"),
			"--human-sample", "2", "--human-sheet", filepath.Join(dir, "echo-sheet"), "--max-requests", "2")
		forgeRunData(t, dir, 2, false, "judge", "--kb", kbF, "--run", forgePayloads[0]+"="+denseF, "--k", "2",
			"--judge-url", echo.URL, "--judge-model", "fake", "--cache", filepath.Join(dir, "echo-cache.jsonl"), "--qrels", filepath.Join(dir, "echo2.qrels"),
			"--batch", "--batch-poll", "10ms")
		forgeRunData(t, dir, 2, false, "evaluate", "--kb", kbF, "--out", filepath.Join(dir, "eval-echo "+hostileFile), "--judge-url", llm.URL,
			"--judge-model", "fake", "--per-locale", "1", "--k", "2", "--bootstrap", "50", "--batch", "--batch-poll", "10ms",
			"--store", "chroma", "--chroma-url", echo.URL, "--chroma-api-key", forgeFlagKey)
		forgeRunData(t, dir, 2, false, "generate", "--kb", kbF, "--out", filepath.Join(dir, "gen-echo.jsonl"), "--generator-url", echo.URL,
			"--generator-model", "g", "--batch", "--batch-poll", "10ms", "--per-locale", "1")
	})
}
