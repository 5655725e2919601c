package calibratereport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/retrieval-gate/retrieval-gate/internal/report/calibratereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const demoDir = "../../../testdata/calibrate"

func readDemo(t *testing.T, human, judge string) *calibrate.Result {
	t.Helper()
	lockData, err := os.ReadFile(filepath.Join(demoDir, "lock.json"))
	require.NoError(t, err)
	lock, err := labelfile.ReadLock(lockData, "lock.json")
	require.NoError(t, err)
	hs, err := labelfile.ReadLabels(context.Background(), strings.NewReader(human), "human.jsonl", labelfile.HumanSide, lock)
	require.NoError(t, err)
	js, err := labelfile.ReadLabels(context.Background(), strings.NewReader(judge), "judge.jsonl", labelfile.JudgeSide, lock)
	require.NoError(t, err)
	r, err := calibrate.Evaluate(t.Context(), calibrate.Input{Lock: lock, Human: hs, Judge: js, Resamples: metrics.DefaultResamples, Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	return r
}

func demoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(demoDir, name))
	require.NoError(t, err)
	return string(b)
}

// violations builds a result with every guard tripped: a construct mismatch, an
// anchoring violation, a changed lock, a failed git check, and user-controlled text
// that would break Markdown.
func violations(t *testing.T) *calibrate.Result {
	human := `{"case_id": "a<script>|@octocat", "dimension": "groundedness", "bin": 0, "construct": "support", "labeled_at": "2026-10-02T00:00:00Z"}
{"case_id": "b", "dimension": "groundedness", "bin": 2, "construct": "support", "labeled_at": "2026-09-01T00:00:00Z"}
{"case_id": "c", "dimension": "groundedness", "bin": 1, "construct": "support", "labeled_at": "2026-09-01T00:00:00Z"}
{"case_id": "d", "dimension": "groundedness", "bin": 2, "construct": "support", "labeled_at": "2026-09-01T00:00:00Z"}
{"case_id": "a<script>|@octocat", "dimension": "faithfulness", "score": 0.1, "construct": "contradiction-only", "labeled_at": "2026-09-01T00:00:00Z"}
{"case_id": "b", "dimension": "faithfulness", "score": 0.9, "construct": "contradiction-only", "labeled_at": "2026-09-01T00:00:00Z"}
{"case_id": "c", "dimension": "faithfulness", "score": 0.5, "construct": "contradiction-only", "labeled_at": "2026-09-01T00:00:00Z"}
`
	judge := `{"case_id": "a<script>|@octocat", "dimension": "groundedness", "score": 0.2, "construct": "support", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "b", "dimension": "groundedness", "score": 0.9, "construct": "support", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "c", "dimension": "groundedness", "score": 0.95, "construct": "support", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "d", "dimension": "groundedness", "score": 0.8, "construct": "support", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "a<script>|@octocat", "dimension": "faithfulness", "score": 0.2, "construct": "faithfulness **any**", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "b", "dimension": "faithfulness", "score": 0.7, "construct": "faithfulness **any**", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "c", "dimension": "faithfulness", "score": 0.1, "construct": "faithfulness **any**", "judged_at": "2026-10-01T00:00:00Z"}
{"case_id": "e", "dimension": "faithfulness", "score": 0.1, "construct": "faithfulness **any**", "judged_at": "2026-10-01T00:00:00Z"}
`
	r := readDemo(t, human, judge)
	r.LockCheck = &calibrate.LockCheck{Base: "origin/main", Changed: []calibrate.LockChange{
		{Code: calibrate.LockSetting, Key: "min_kappa", From: "0.6", To: "0.3"},
		{Code: calibrate.LockSetting, Key: "dimensions.groundedness.gated", From: "true", To: "false"},
	}}
	r.GitAnchor = &calibrate.GitAnchoring{HumanCommit: strings.Repeat("a", 40), JudgeCommit: strings.Repeat("b", 40),
		Findings: []outcome.Clause{{Code: outcome.AnchorNotAncestor, Names: []string{strings.Repeat("a", 40), strings.Repeat("b", 40)}}}}
	r.Finish()
	return r
}

// panelDemo is the panel demo (testdata/calibrate/panel) with a carried-over
// dimension that changed and a blind-relabelling check that failed for one rater.
func panelDemo(t *testing.T) *calibrate.Result {
	t.Helper()
	dir := filepath.Join(demoDir, "panel")
	lock, err := labelfile.ReadLockFile(t.Context(), filepath.Join(dir, "lock.json"))
	require.NoError(t, err)
	hs, err := inputtest.ReadLabelsFile(t.Context(), filepath.Join(dir, "human.jsonl"), labelfile.HumanSide, lock)
	require.NoError(t, err)
	js, err := inputtest.ReadLabelsFile(t.Context(), filepath.Join(dir, "judge.jsonl"), labelfile.JudgeSide, lock)
	require.NoError(t, err)
	hs.File = "human.jsonl"
	r, err := calibrate.Evaluate(t.Context(), calibrate.Input{Lock: lock, Human: hs, Judge: js, Resamples: metrics.DefaultResamples, Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	r.CarriedOver = &calibrate.CarriedOverCheck{Base: "origin/main", Path: "eval/human.jsonl", Dimensions: []calibrate.CarriedDimension{
		{Name: "groundedness", Code: calibrate.CarriedChanged, Changed: []string{"en-golden-007", "en-golden|@x"}, Labels: 40}}}
	r.Blind = &calibrate.BlindCheck{Commits: 12, Versions: 5, Raters: []calibrate.RaterBlind{
		{Rater: "ana", Labels: 80, Violations: []calibrate.BlindViolation{}},
		{Rater: "bo", Labels: 40, Violations: []calibrate.BlindViolation{{CaseID: "en-golden-002", Dimension: "faithfulness", Code: calibrate.BlindNotBefore,
			LabelCommit: strings.Repeat("c", 40), JudgeCommit: strings.Repeat("d", 40), JudgedAt: time.Date(2026, 9, 20, 9, 0, 0, 0, time.UTC),
			File: "human.jsonl", Line: 6}}},
		{Rater: "owner", Labels: 44, Violations: []calibrate.BlindViolation{{CaseID: "en-golden-003", Dimension: "faithfulness", Adjudication: true,
			Code: calibrate.BlindSameCommit, LabelCommit: strings.Repeat("e", 40), JudgeCommit: strings.Repeat("e", 40),
			JudgedAt: time.Date(2026, 10, 1, 11, 0, 0, 0, time.FixedZone("", 2*3600)), File: "human.jsonl", Line: 13}}},
	}}
	r.Finish()
	return r
}

// adoptedDemo is the panel demo under a lock that names the owner, records the
// panel adoption and defines faithfulness's construct, compared with a
// single-rater base: the adoption covers the move to the panel, and a relaxed
// threshold is still a change.
func adoptedDemo(t *testing.T) *calibrate.Result {
	t.Helper()
	dir := filepath.Join(demoDir, "panel")
	lock, err := labelfile.ReadLock([]byte(`{"dimensions": {"groundedness": {"construct": "support", "gated": true, "carried_over": true},
 "faithfulness": {"construct": "contradiction-only", "gated": true, "definition": "a claim fails only when the context contradicts it; *not* when it is unmentioned"}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6, "raters": "panel", "owner": "owner",
 "panel_adoption": {"reason": "ADR-0028: faithfulness relabelled by a blind panel <b>", "carried_over": ["groundedness"]}}`), "lock.json")
	require.NoError(t, err)
	hs, err := inputtest.ReadLabelsFile(t.Context(), filepath.Join(dir, "human.jsonl"), labelfile.HumanSide, lock)
	require.NoError(t, err)
	js, err := inputtest.ReadLabelsFile(t.Context(), filepath.Join(dir, "judge.jsonl"), labelfile.JudgeSide, lock)
	require.NoError(t, err)
	hs.File = "human.jsonl"
	r, err := calibrate.Evaluate(t.Context(), calibrate.Input{Lock: lock, Human: hs, Judge: js, Resamples: metrics.DefaultResamples, Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	r.LockCheck = &calibrate.LockCheck{Base: "origin/main",
		Changed: []calibrate.LockChange{{Code: calibrate.LockSetting, Key: "min_kappa", From: "0.7", To: "0.6"}},
		Adoption: &calibrate.AdoptionCheck{Reason: lock.Adoption.Reason, CarriedOver: lock.Adoption.CarriedOver, Covered: []calibrate.LockChange{
			{Code: calibrate.LockSetting, Key: "raters", From: "single", To: "panel", FromDefault: true},
			{Code: calibrate.LockSetting, Key: "owner", To: "owner", Text: true, FromDefault: true},
			{Code: calibrate.LockSetting, Key: "dimensions.groundedness.carried_over", From: "false", To: "true"},
		}}}
	r.Finish()
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./calibrate -update to create it")
	assert.Equal(t, string(want), string(got))
}

func TestReportsGolden(t *testing.T) {
	demo := readDemo(t, demoFile(t, "human.jsonl"), demoFile(t, "judge.jsonl"))
	demo.Finish()
	tests := []struct {
		name string
		r    *calibrate.Result
	}{{"demo", demo}, {"violations", violations(t)}, {"panel", panelDemo(t)}, {"adopted", adoptedDemo(t)}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var js, md, txt bytes.Buffer
			require.NoError(t, calibratereport.New(tt.r).WriteJSON(&js))
			require.NoError(t, calibratereport.New(tt.r).Markdown(&md, "<!-- retrieval-gate:calibrate -->"))
			require.NoError(t, calibratereport.New(tt.r).Text(&txt))
			golden(t, tt.name+".json", js.Bytes())
			golden(t, tt.name+".md", md.Bytes())
			golden(t, tt.name+".txt", txt.Bytes())
		})
	}
}

// The panel's document round-trips through Read and renders the same.
func TestPanelDocumentReadBack(t *testing.T) {
	doc := calibratereport.New(panelDemo(t))
	var js bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	back, err := readDoc(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	var a, b bytes.Buffer
	require.NoError(t, doc.Markdown(&a, ""))
	require.NoError(t, back.Markdown(&b, ""))
	assert.Equal(t, a.String(), b.String())
	var m map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	assert.Equal(t, "panel", m["raters"])
	p := m["dimensions"].(map[string]any)["faithfulness"].(map[string]any)["panel"].(map[string]any)
	assert.Equal(t, []any{"ana", "bo", "cy"}, p["raters"])
	assert.Equal(t, 40.0, p["n"])
	assert.Equal(t, 120.0, p["values"])
	assert.Equal(t, "bca-units", p["alpha_ci95_method"])
	assert.Len(t, p["adjudications"], 4)
	assert.Equal(t, false, m["carried_over"].(map[string]any)["ok"])
	assert.Equal(t, 2.0, m["blind_labels"].(map[string]any)["not_blind"])
	assert.Equal(t, "fail", m["verdict"])
	assert.Equal(t, true, m["dimensions"].(map[string]any)["groundedness"].(map[string]any)["carried_over"])
	assertSortedKeys(t, json.NewDecoder(bytes.NewReader(js.Bytes())), "$")
	assert.NotContains(t, a.String(), "|@x", "case ids are escaped")
}

// A panel dimension without labels says so in one line.
// The adoption's document (owner, panel adoption, definition, the lock's
// covered changes) round-trips through Read and renders the same; a lock
// without them has none of their keys.
func TestAdoptedDocumentReadBack(t *testing.T) {
	doc := calibratereport.New(adoptedDemo(t))
	var js bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	back, err := readDoc(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	for _, render := range []func(*calibratereport.Document, *bytes.Buffer) error{
		func(d *calibratereport.Document, b *bytes.Buffer) error { return d.Markdown(b, "") },
		func(d *calibratereport.Document, b *bytes.Buffer) error { return d.Text(b) },
	} {
		var a, b bytes.Buffer
		require.NoError(t, render(doc, &a))
		require.NoError(t, render(back, &b))
		assert.Equal(t, a.String(), b.String())
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	assert.Equal(t, "owner", m["owner"])
	assert.Equal(t, []any{"groundedness"}, m["panel_adoption"].(map[string]any)["carried_over"])
	lock := m["lock"].(map[string]any)
	assert.Equal(t, []any{"min_kappa: 0.7 -> 0.6"}, lock["changed"])
	assert.Equal(t, []any{"raters: single (default) -> panel", `owner: (none) -> "owner"`, "dimensions.groundedness.carried_over: false -> true"},
		lock["adoption"].(map[string]any)["changes"])
	assert.Contains(t, m["dimensions"].(map[string]any)["faithfulness"].(map[string]any)["constructs"].(map[string]any)["definition"], "contradicts")
	assertSortedKeys(t, json.NewDecoder(bytes.NewReader(js.Bytes())), "$")

	var plain bytes.Buffer
	require.NoError(t, calibratereport.New(panelDemo(t)).WriteJSON(&plain))
	for _, key := range []string{`"owner":`, `"panel_adoption":`, `"adoption":`, `"definition":`} {
		assert.NotContains(t, plain.String(), key, "a lock without it has no %s key", key)
	}
}

func TestPanelWithoutLabels(t *testing.T) {
	lock, err := labelfile.ReadLock([]byte(`{"dimensions": {"a": {"construct": "x", "gated": false}}, "bins": [0.5],
 "kappa_weighting": "none", "min_kappa": 0, "raters": "panel"}`), "lock.json")
	require.NoError(t, err)
	r, err := calibrate.Evaluate(t.Context(), calibrate.Input{Lock: lock})
	require.NoError(t, err)
	r.Finish()
	var txt bytes.Buffer
	require.NoError(t, calibratereport.New(r).Text(&txt))
	assert.Contains(t, txt.String(), "\n  a: panel: no human label\n")
}

// The Markdown's interval column says which statistic it is the 95% interval
// of (the table shows kappa and weighted kappa side by side), as the text's
// "ci95 (w.kappa)" does.
func TestMarkdownNamesTheIntervalsStatistic(t *testing.T) {
	r := readDemo(t, demoFile(t, "human.jsonl"), demoFile(t, "judge.jsonl"))
	r.Finish()
	d := calibratereport.New(r)
	var md, txt bytes.Buffer
	require.NoError(t, d.Markdown(&md, ""))
	require.NoError(t, d.Text(&txt))
	assert.Contains(t, md.String(), "| kappa | weighted kappa | 95% CI of weighted kappa |")
	assert.Contains(t, txt.String(), "ci95 (w.kappa)")
}

func TestDemoPasses(t *testing.T) {
	r := readDemo(t, demoFile(t, "human.jsonl"), demoFile(t, "judge.jsonl"))
	r.Finish()
	assert.Equal(t, outcome.Pass, r.Verdict())
	for _, d := range r.Dimensions {
		assert.GreaterOrEqual(t, d.N, 117, d.Name)
		assert.Greater(t, d.WeightedKappa, 0.6, d.Name)
		assert.NotEmpty(t, d.HumanOnly, "the demo has unpaired labels, and they are reported")
	}
}

func TestCalibrationJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, calibratereport.New(violations(t)).WriteJSON(&buf))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	assert.Equal(t, "retrieval-gate/calibration@1", doc["schema"])
	assert.Equal(t, "fail", doc["verdict"])
	lock := doc["lock"].(map[string]any)
	assert.Equal(t, false, lock["ok"])
	assert.Equal(t, []any{"min_kappa: 0.6 -> 0.3", "dimensions.groundedness.gated: true -> false"}, lock["changed"])

	dims := doc["dimensions"].(map[string]any)
	f := dims["faithfulness"].(map[string]any)
	assert.Equal(t, "construct-mismatch", f["status"])
	for _, k := range []string{"agreement", "kappa", "weighted_kappa", "ci95"} {
		assert.Nil(t, f[k], "%s of a construct mismatch is not presented as a measurement", k)
	}
	assert.Contains(t, f, "invalid_measurement")
	assert.Equal(t, []any{"e"}, f["unpaired"].(map[string]any)["judge_only"])

	g := dims["groundedness"].(map[string]any)
	assert.Equal(t, "anchoring-violation", g["status"])
	for _, k := range []string{"n", "status", "construct", "agreement", "kappa", "weighted_kappa", "ci95", "confusion", "violations"} {
		assert.Contains(t, g, k, "contract key %s", k)
	}
	assert.NotContains(t, g, "invalid_measurement")
	v := g["violations"].([]any)[0].(map[string]any)
	assert.Equal(t, "a<script>|@octocat", v["case_id"])
	assert.Equal(t, []any{[]any{1.0, 0.0, 0.0}, []any{0.0, 0.0, 1.0}, []any{0.0, 0.0, 2.0}}, g["confusion"])

	// Every object's keys are sorted.
	assertSortedKeys(t, json.NewDecoder(bytes.NewReader(buf.Bytes())), "$")

	// Byte-identical on a second run.
	var again bytes.Buffer
	require.NoError(t, calibratereport.New(violations(t)).WriteJSON(&again))
	assert.Equal(t, buf.String(), again.String())
}

// smallFaithfulness is the demo with its first 8 faithfulness pairs only (which
// all agree: the Wilson-disagreement interval, unreliable below 50 pairs) and
// every groundedness pair (119: BCa, trusted).
func smallFaithfulness(t *testing.T) *calibrate.Result {
	t.Helper()
	cut := func(file string) string {
		var b strings.Builder
		kept := 0
		for _, line := range strings.SplitAfter(demoFile(t, file), "\n") {
			if strings.Contains(line, `"faithfulness"`) {
				if kept == 8 {
					continue
				}
				kept++
			}
			b.WriteString(line)
		}
		return b.String()
	}
	r := readDemo(t, cut("human.jsonl"), cut("judge.jsonl"))
	r.Finish()
	return r
}

// A kappa interval whose method covers less than 95% at its n is marked † in
// the text and Markdown, with the footnote every report gives the mark, and
// flagged in the JSON beside its method; one that is trusted is neither. The
// document reads back and renders the same; one written before the keys
// existed reads as it did, unmarked.
func TestUnreliableKappaInterval(t *testing.T) {
	doc := calibratereport.New(smallFaithfulness(t))
	var js, txt, md bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	require.NoError(t, doc.Text(&txt))
	require.NoError(t, doc.Markdown(&md, ""))

	row := func(s, prefix string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, s)
		return ""
	}
	assert.Regexp(t, `^faithfulness +yes +8 .* \[0\.\d{3}, 1\.000\]† +fail$`, row(txt.String(), "faithfulness "))
	assert.NotContains(t, row(txt.String(), "groundedness "), "†")
	assert.Regexp(t, `^\| faithfulness \| yes \| 8 \|.* \| \[0\.\d{3}, 1\.000\]† \| fail \|$`, row(md.String(), "| faithfulness |"))
	assert.NotContains(t, row(md.String(), "| groundedness |"), "†")
	for _, out := range []string{txt.String(), md.String()} {
		assert.Equal(t, 1, strings.Count(out, "\n"+calibratereport.UnreliableNote+"\n"), "the footnote, once:\n%s", out)
		assert.True(t, strings.HasPrefix(calibratereport.UnreliableNote, format.UnreliableNote), "check's and compare's wording")
	}

	var m map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	dims := m["dimensions"].(map[string]any)
	f, g := dims["faithfulness"].(map[string]any), dims["groundedness"].(map[string]any)
	assert.Equal(t, 8.0, f["n"])
	assert.Equal(t, metrics.MethodWilsonDisagreement, f["ci95_method"])
	assert.Equal(t, true, f["unreliable"])
	assert.Equal(t, 119.0, g["n"])
	assert.Equal(t, metrics.KappaCIMethod, g["ci95_method"])
	assert.Equal(t, false, g["unreliable"])
	assertSortedKeys(t, json.NewDecoder(bytes.NewReader(js.Bytes())), "$")

	back, err := readDoc(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	var js2, txt2, md2 bytes.Buffer
	require.NoError(t, back.WriteJSON(&js2))
	require.NoError(t, back.Text(&txt2))
	require.NoError(t, back.Markdown(&md2, ""))
	assert.Equal(t, js.String(), js2.String())
	assert.Equal(t, txt.String(), txt2.String())
	assert.Equal(t, md.String(), md2.String())

	// A document without the keys (written before them) reads, and renders
	// as it did: no mark, no footnote, everything else the same.
	old := regexp.MustCompile(`(?m)^ *"(ci95_method|unreliable)": .*\n`).ReplaceAll(js.Bytes(), nil)
	require.NotContains(t, string(old), `"unreliable"`)
	prior, err := readDoc(bytes.NewReader(old))
	require.NoError(t, err)
	var txt3, md3 bytes.Buffer
	require.NoError(t, prior.Text(&txt3))
	require.NoError(t, prior.Markdown(&md3, ""))
	// Before: the text's column one wider where the mark was, the Markdown's
	// cell without it, and neither with the footnote.
	wantTxt := strings.NewReplacer(calibratereport.UnreliableNote+"\n", "", "]† ", "]  ").Replace(txt.String())
	wantMD := strings.NewReplacer(calibratereport.UnreliableNote+"\n\n", "", "]† ", "] ").Replace(md.String())
	assert.Equal(t, wantTxt, txt3.String())
	assert.Equal(t, wantMD, md3.String())
	assert.NotContains(t, txt3.String()+md3.String(), "†")

	// Written as calibrate writes them, each is checked: a flag that is not
	// true or false is refused at its line.
	bad := bytes.Replace(js.Bytes(), []byte(`"unreliable": true`), []byte(`"unreliable": "yes"`), 1)
	_, err = readDoc(bytes.NewReader(bad))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dimensions.faithfulness.unreliable")
}

func TestCalibrationMarkdownEscapes(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, calibratereport.New(violations(t)).Markdown(&buf, "<!-- retrieval-gate:calibrate-nightly -->"))
	md := buf.String()
	assert.True(t, strings.HasPrefix(md, "<!-- retrieval-gate:calibrate-nightly -->\n"))
	assert.NotContains(t, md, "<script>")
	assert.NotRegexp(t, `(^|[^\\])@`, md, "no unescaped @: it would mention a user")
	assert.NotContains(t, md, "**any**")
	assert.Contains(t, md, `a&lt;script&gt;\|&#64;&#8203;octocat`)
	assert.Contains(t, md, "measure different things")
	assert.Contains(t, md, "not a valid measurement")
	assert.Contains(t, md, "min\\_kappa: 0.6 -&gt; 0.3")
}

func TestCalibrationMarkdownCapsLists(t *testing.T) {
	var human, judge strings.Builder
	for i := range 120 {
		// Every judge score two bins above the label: 120 disagreements one way.
		fmt.Fprintf(&human, `{"case_id": "case-%03d", "dimension": "groundedness", "bin": 0, "construct": "support", "labeled_at": "2026-09-01T00:00:00Z"}`+"\n", i)
		fmt.Fprintf(&judge, `{"case_id": "case-%03d", "dimension": "groundedness", "score": 0.9, "construct": "support", "judged_at": "2026-10-01T00:00:00Z"}`+"\n", i)
	}
	r := readDemo(t, human.String(), judge.String())
	r.Finish()
	var md, js bytes.Buffer
	require.NoError(t, calibratereport.New(r).Markdown(&md, "<!-- retrieval-gate:calibrate -->"))
	require.NoError(t, calibratereport.New(r).WriteJSON(&js))
	assert.Contains(t, md.String(), "<summary>Judge above human: 120</summary>")
	assert.Contains(t, md.String(), "- case case-049: human bin 0, judge bin 2\n- … and 70 more (every case is in the JSON report)\n")
	assert.NotContains(t, md.String(), "case-050")
	assert.Contains(t, js.String(), `"case_id": "case-119"`)

	// The terminal lists at most 20 violations and unpaired ids per dimension.
	hs := strings.ReplaceAll(human.String(), `"construct": "support"`, `"construct": "other"`)
	r = readDemo(t, hs, judge.String()+`{"case_id": "only-judge", "dimension": "faithfulness", "score": 0.9, "construct": "contradiction-only", "judged_at": "2026-10-01T00:00:00Z"}`+"\n")
	r.Finish()
	var txt bytes.Buffer
	require.NoError(t, calibratereport.New(r).Text(&txt))
	assert.Contains(t, txt.String(), "  groundedness: case-019: human construct")
	assert.NotContains(t, txt.String(), "case-020: human construct")
	assert.Contains(t, txt.String(), "  groundedness: … and 100 more violations (all in --json and --markdown)\n")
	assert.Contains(t, txt.String(), "  faithfulness: judge scores without a human label: only-judge\n")
}

// assertSortedKeys reads one JSON value from dec and checks that the keys of every
// object in it are in ascending order.
func assertSortedKeys(t *testing.T, dec *json.Decoder, path string) {
	t.Helper()
	tok, err := dec.Token()
	require.NoError(t, err)
	switch tok {
	case json.Delim('{'):
		var keys []string
		for dec.More() {
			k, err := dec.Token()
			require.NoError(t, err)
			keys = append(keys, k.(string))
			assertSortedKeys(t, dec, path+"."+k.(string))
		}
		_, err = dec.Token()
		require.NoError(t, err)
		assert.IsIncreasing(t, keys, "keys of %s", path)
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			assertSortedKeys(t, dec, fmt.Sprintf("%s[%d]", path, i))
		}
		_, err = dec.Token()
		require.NoError(t, err)
	}
}

func disagreementList(n int) calibratereport.DisagreementList {
	l := make(calibratereport.DisagreementList, n)
	for i := range l {
		l[i] = calibrate.Disagreement{CaseID: fmt.Sprintf("case-%07d<&>\u2028", i), HumanBin: i % 3, JudgeBin: (i + 1) % 3}
	}
	return l
}

// A list of disagreements is written in chunks (StreamJSON, MarshalJSON)
// exactly as a []Disagreement marshalled whole, on either side of a chunk's
// end, and reads back the same.
func TestDisagreementListJSON(t *testing.T) {
	for _, n := range []int{0, 1, 1023, 1024, 1025, 2048, 2049, 3000} {
		l := disagreementList(n)
		whole := make([]calibratereport.Disagreement, n)
		for i, d := range l {
			whole[i] = calibratereport.Disagreement(d)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(whole))
		got, err := l.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, strings.TrimSuffix(want.String(), "\n"), string(got), "n = %d", n)
		var back calibratereport.DisagreementList
		require.NoError(t, json.Unmarshal(got, &back))
		assert.Equal(t, []calibrate.Disagreement(l), []calibrate.Disagreement(back), "n = %d", n)
	}
}

// The --json report does not hold its disagreements' JSON whole: writing a
// document of 20,000 disagreements allocates under half its size (2.7 times
// it when the document was marshalled whole, in json.Encoder's buffer grown
// by doubling: at 10M pairs a 256 MB buffer, the peak of the run).
func TestWriteJSONStreamsDisagreements(t *testing.T) {
	doc := calibratereport.New(readDemo(t, demoFile(t, "human.jsonl"), demoFile(t, "judge.jsonl")))
	for _, dim := range doc.Dimensions {
		dim.Disagreements = calibratereport.Disagreements{HumanAboveJudge: disagreementList(5000), JudgeAboveHuman: disagreementList(5000)}
	}
	var js bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	back, err := readDoc(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	for name, dim := range doc.Dimensions {
		assert.Equal(t, dim.Disagreements, back.Dimensions[name].Disagreements)
	}
	if racetest.Enabled {
		t.Skip("allocation count under -race")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, doc.WriteJSON(io.Discard))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(js.Len()/2), "bytes allocated for a %d-byte report", js.Len())
}

// readDoc reads a calibration document as report.Read does: readback.Parse,
// then ReadParsed.
func readDoc(r io.Reader) (*calibratereport.Document, error) {
	data, root, err := readback.Parse(r, "")
	if err != nil {
		return nil, err
	}
	return calibratereport.ReadParsed(data, root)
}
