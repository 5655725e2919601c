package junit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/junit"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type cardSet map[string]bool

func (s cardSet) Has(id string) bool { return s[id] }

// checkResult is check's result on a small hostile set: two unknown gold ids
// (one with characters XML cannot hold), an empty one, a floor that fails and
// one that is off; maxProblems bounds the problems kept.
func checkResult(t *testing.T, maxProblems int) *gate.Result {
	t.Helper()
	kb := cardSet{"en-reset": true, "en-2fa": true}
	s := &gate.Scorer{KB: kb, K: 3}
	a := gate.NewAccumulator()
	a.MaxProblems = maxProblems
	cases := []casefile.Case{
		{ID: "en-1", Locale: "en", Type: "golden", Gold: []string{"en-reset"}, Retrieved: []casefile.Retrieved{{ID: "en-reset"}}},
		{ID: "en-2", Locale: "en", Type: "golden", Gold: []string{"en-2fa"}, Retrieved: []casefile.Retrieved{{ID: "en-reset"}}},
		{ID: `x"<&>]]>` + "\x01\u2028", Locale: "en", Type: "golden", Gold: []string{"no-such-card</failure>\x1b"}, Retrieved: []casefile.Retrieved{{ID: "en-reset"}}},
		{ID: "en-4", Locale: "en", Type: "golden", Gold: []string{""}, Retrieved: []casefile.Retrieved{{ID: "en-reset"}}},
		{ID: "en-5", Locale: "en", Type: "golden", Gold: []string{"gone"}, Retrieved: []casefile.Retrieved{{ID: "en-2fa"}}},
	}
	for i := range cases {
		c := &cases[i]
		c.File, c.Line = "eval/cases.jsonl", i+1
		var r gate.CaseResult
		require.NoError(t, s.ScoreInto(c, &r))
		require.NoError(t, a.Add(&r))
	}
	return gateResult(a, gate.Config{K: 3, ReferenceLocale: "en", MinHit: gate.Floor{Set: true, Value: 0.9}, KBCards: len(kb), Resamples: 200})
}

// compareResult is the compare demo's gate on dense with a floor it fails and
// --fail-if-beaten.
func compareResult(t *testing.T) *compare.Result {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join("..", "..", "..", "testdata", "compare")
	q, err := inputtest.ReadQrels(ctx, filepath.Join(dir, "qrels.trec"))
	require.NoError(t, err)
	var in []compare.Input
	for _, name := range []string{"bm25", "dense", "hybrid+rerank"} {
		run, err := inputtest.ReadRun(ctx, filepath.Join(dir, name+".trec"), 10, trecfile.RunOptions{})
		require.NoError(t, err)
		in = append(in, compare.Input{Name: name, Run: run})
	}
	spec, err := compare.FloorGrammar.Parse("ndcg_at_k=0.99")
	require.NoError(t, err)
	r, err := compare.Compare(q, in, compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Primary: compare.Primary, Resamples: 200, Seed: metrics.DefaultSeed,
		Gate: compare.GateOptions{Strategy: "dense", Floors: floor.List{spec}, FailIfBeaten: true}})
	require.NoError(t, err)
	return r
}

func render(t *testing.T, suites ...junit.Suite) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, junit.Write(&b, suites...))
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./internal/report/junit -update creates %s", path)
	assert.Equal(t, string(want), string(got), "golden file %s (-update rewrites it)", path)
}

func TestGolden(t *testing.T) {
	golden(t, "check.xml", render(t, junit.Check(checkResult(t, 0))))
	golden(t, "compare.xml", render(t, junit.Compare(compareResult(t))))
}

// A failed gate's message and text carry its value and threshold unrounded,
// as the JSON does (the shortest form that reads back as the same float64),
// before its reason, whose words keep the reports' rounded figures; a
// figure the gate lacks is left out of the message and null in the text.
func TestFailureUnrounded(t *testing.T) {
	floorGate := outcome.New("floor:retrieval_hit_at_k@locale:pt-BR", outcome.Fail)
	floorGate.Group, floorGate.Measure, floorGate.Value, floorGate.Threshold, floorGate.N = "locale:pt-BR", "retrieval_hit_at_k", 25.0/39, 0.7, 39
	floorGate.Why = []outcome.Clause{{Code: outcome.BelowFloor, Name: "locale:pt-BR", Value: 25.0 / 39, Threshold: 0.7}}
	near := outcome.New("min_recall", outcome.Fail)
	near.Group, near.Measure, near.Value, near.Threshold, near.N = "overall", "retrieval_recall_at_k", 0.6999999, 0.7, 1000
	near.Why = []outcome.Clause{{Code: outcome.BelowFloor, Name: "overall", Value: 0.6999999, Threshold: 0.7}}
	empty := outcome.New("floor:retrieval_ndcg_at_k@type:smoke", outcome.Fail)
	empty.Group, empty.Measure, empty.Value, empty.Threshold = "type:smoke", "retrieval_ndcg_at_k", math.NaN(), 0.5
	empty.Why = []outcome.Clause{{Code: outcome.NoGoldScored, Name: "type:smoke"}}
	integrity := outcome.New("integrity", outcome.Fail)
	integrity.N = 5
	integrity.Why = []outcome.Clause{{Code: outcome.Unresolved, N: 2}}
	// check --baseline's regression gates: the value is the drop of the
	// measure from the baseline, the threshold the drop tolerated
	// (docs/baseline.md), as in the demo's regressed run (hit@5 0.985 -> 0.924).
	drop := outcome.New("max_drop_hit", outcome.Fail)
	drop.Group, drop.Measure, drop.Value, drop.Threshold, drop.N = "overall", "retrieval_hit_at_k", 8.0/132, 0.01, 132
	drop.Why = []outcome.Clause{{Code: outcome.Dropped, Name: "overall", Value: 8.0 / 132, Base: 130.0 / 132, Current: 122.0 / 132, Threshold: 0.01, Test: "mcnemar_exact", P: 0.0078}}
	groupDrop := outcome.New("max_drop:retrieval_recall_at_k@type:golden", outcome.Fail)
	groupDrop.Group, groupDrop.Measure, groupDrop.Value, groupDrop.Threshold, groupDrop.N = "type:golden", "retrieval_recall_at_k", 0.05, 0.02, 104
	s := junit.Check(&gate.Result{K: 5, Gates: outcome.Gates{integrity, floorGate, near, empty, drop, groupDrop}})
	require.Len(t, s.Cases, 6)
	tests := []struct {
		name, message, detail string
	}{
		{"integrity: no figure", "2 gold id(s) do not resolve to a card of the knowledge base",
			"n: 5\nreason: 2 gold id(s) do not resolve to a card of the knowledge base\n"},
		{"floor:retrieval_hit_at_k@locale:pt-BR",
			"retrieval_hit_at_k = 0.6410256410256411, threshold 0.7, n = 39; reason: locale:pt-BR mean 0.641 is below the floor 0.700",
			"measure: retrieval_hit_at_k\nvalue: 0.6410256410256411\nthreshold: 0.7\nn: 39\ngroup: locale:pt-BR\nreason: locale:pt-BR mean 0.641 is below the floor 0.700\n"},
		{"min_recall (overall)",
			"retrieval_recall_at_k = 0.6999999, threshold 0.7, n = 1000; reason: overall mean 0.6999999 is below the floor 0.7000000",
			"measure: retrieval_recall_at_k\nvalue: 0.6999999\nthreshold: 0.7\nn: 1000\ngroup: overall\nreason: overall mean 0.6999999 is below the floor 0.7000000\n"},
		{"floor:retrieval_ndcg_at_k@type:smoke",
			"retrieval_ndcg_at_k, threshold 0.5; reason: n = 0: no gold-carrying cases were scored in type:smoke",
			"measure: retrieval_ndcg_at_k\nvalue: null\nthreshold: 0.5\ngroup: type:smoke\nreason: n = 0: no gold-carrying cases were scored in type:smoke\n"},
		{"max_drop_hit (overall): a drop, not a hit@k of 0.06",
			"drop of retrieval_hit_at_k = 0.06060606060606061, threshold 0.01, n = 132; reason: overall mean dropped 0.061 (from 0.985 to 0.924), more than the 0.010 tolerated; mcnemar_exact p = 0.0078",
			"measure: retrieval_hit_at_k\nvalue: 0.06060606060606061\nthreshold: 0.01\nn: 132\ngroup: overall\nreason: overall mean dropped 0.061 (from 0.985 to 0.924), more than the 0.010 tolerated; mcnemar_exact p = 0.0078\n"},
		{"max_drop:retrieval_recall_at_k@type:golden",
			"drop of retrieval_recall_at_k = 0.05, threshold 0.02, n = 104; reason: the gate failed",
			"measure: retrieval_recall_at_k\nvalue: 0.05\nthreshold: 0.02\nn: 104\ngroup: type:golden\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := s.Cases[i]
			assert.Equal(t, outcome.Fail, c.Status)
			assert.Equal(t, tt.message, c.Message)
			assert.Equal(t, tt.detail, c.Detail)
		})
	}
}

// A failed gate's text is one line per field whatever its group's name holds:
// a type or locale comes from the cases, and one with line breaks
// ("a\nvalue: 1\nthreshold: 0") added lines a script reading the fields took
// for the gate's (the last "value:" was 1). Its breaks are spaces, as in the
// case's name and message.
func TestDetailOneLinePerField(t *testing.T) {
	group := "type:a\nvalue: 1\r\nthreshold: 0\u2028n: 999\u0085"
	g := outcome.New("floor:retrieval_hit_at_k@"+group, outcome.Fail)
	g.Group, g.Measure, g.Value, g.Threshold, g.N = group, "retrieval_hit_at_k", 0.5, 0.9, 2
	g.Why = []outcome.Clause{{Code: outcome.BelowFloor, Name: group, Value: 0.5, Threshold: 0.9}}
	out := render(t, junit.Check(&gate.Result{K: 5, Gates: outcome.Gates{g}}))
	var doc struct {
		Cases []struct {
			Failure struct {
				Text string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testsuite>testcase"`
	}
	require.NoError(t, xml.Unmarshal(out, &doc))
	require.Len(t, doc.Cases, 1)
	var keys []string
	for _, line := range strings.Split(strings.TrimSuffix(doc.Cases[0].Failure.Text, "\n"), "\n") {
		k, _, ok := strings.Cut(line, ": ")
		require.True(t, ok, "a line of the text is a field: %q", line)
		keys = append(keys, k)
	}
	assert.Equal(t, []string{"measure", "value", "threshold", "n", "group", "reason"}, keys, "%q", doc.Cases[0].Failure.Text)
	assert.Contains(t, doc.Cases[0].Failure.Text, "\nvalue: 0.5\nthreshold: 0.9\nn: 2\ngroup: type:a value: 1  threshold: 0 n: 999 \nreason: type:a value: 1  threshold: 0 n: 999  mean 0.500")
}

// A gate's test case name holds its group, a type or locale of the cases: a
// bidi override or zero-width character in it was written as it is (the
// XML escaper keeps every XML character), so the name a CI's test view shows
// read differently from the group's "group:" line in the same case, which
// SanitizeText escapes. The name is escaped the same way.
func TestGateNameEscaped(t *testing.T) {
	group := "locale:ar\u202E\u200Bx"
	g := outcome.New("floor:retrieval_hit_at_k@"+group, outcome.Fail)
	g.Group, g.Measure, g.Value, g.Threshold, g.N = group, "retrieval_hit_at_k", 0.5, 0.9, 2
	s := junit.Check(&gate.Result{K: 5, Gates: outcome.Gates{g}})
	require.Len(t, s.Cases, 1)
	assert.Equal(t, "floor:retrieval_hit_at_k@locale:ar(U+202E)(U+200B)x", s.Cases[0].Name)
	assert.Contains(t, s.Cases[0].Detail, "group: locale:ar(U+202E)(U+200B)x\n")
}

// A gate's reason that names long groups of the data (a floor on a group
// the data lacks lists the data's groups: up to 50 types and 50 locales,
// named by the cases) is cut in its test case, "…" marking the cut, so the
// document stays under its bound (MaxBytes, docs/ci.md). Before, 60 types of
// 200 KB made a 20 MB report of one failed gate.
func TestGateReasonBounded(t *testing.T) {
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("type:t%02d%s", i, strings.Repeat("x", 200000)))
	}
	g := outcome.New("floor:retrieval_hit_at_k@type:nope", outcome.Fail)
	g.Group, g.Measure, g.Value, g.Threshold = "type:nope", "retrieval_hit_at_k", math.NaN(), 0.5
	g.Why = []outcome.Clause{{Code: outcome.NoSuchGroup, Names: names}}
	off := outcome.New("min_hit", outcome.Off)
	off.Why = []outcome.Clause{{Code: outcome.NoSuchGroup, Names: names}}
	s := junit.Check(&gate.Result{K: 5, Gates: outcome.Gates{g, off}})
	out := render(t, s)
	assert.Less(t, len(out), 128<<10, "two gates take a few dozen KiB")
	require.Len(t, s.Cases, 2)
	assert.True(t, strings.HasPrefix(s.Cases[0].Message, "retrieval_hit_at_k, threshold 0.5; reason: no such group in the data (groups: type:t00xxx"), s.Cases[0].Message[:120])
	assert.True(t, strings.HasSuffix(s.Cases[0].Message, "x…"))
	assert.True(t, strings.HasSuffix(s.Cases[0].Detail, "x…\n"))
	assert.True(t, strings.HasSuffix(s.Cases[1].Message, "x…"), "an off gate's reason too")
	assert.LessOrEqual(t, len(s.Cases[1].Message), 16<<10+len("…"))
	// A reason of an ordinary length is whole.
	s = junit.Check(&gate.Result{K: 5, Gates: outcome.Gates{func() outcome.Gate {
		h := g
		h.Why = []outcome.Clause{{Code: outcome.NoSuchGroup, Names: []string{"overall", "type:golden", "locale:en"}}}
		return h
	}()}})
	assert.Equal(t, "retrieval_hit_at_k, threshold 0.5; reason: no such group in the data (groups: overall, type:golden, locale:en)", s.Cases[0].Message)
}

func TestCheckCases(t *testing.T) {
	s := junit.Check(checkResult(t, 0))
	byStatus := map[string][]string{}
	for _, c := range s.Cases {
		byStatus[string(c.Status)] = append(byStatus[string(c.Status)], c.Name)
	}
	assert.Equal(t, []string{"integrity", "min_hit (overall)"}, byStatus["fail"][:2], "the failed gates fail")
	assert.Contains(t, byStatus["off"], "min_recall (overall)", "an off gate is skipped")
	assert.Contains(t, byStatus["pass"], "non_empty (overall)")
	var problems []string
	for _, c := range s.Cases {
		if c.Class == "retrieval-gate.check.integrity" {
			problems = append(problems, c.Name)
		}
	}
	require.Len(t, problems, 3, "one case per integrity problem")
	assert.True(t, strings.HasPrefix(problems[0], "eval/cases.jsonl:3: case "), problems[0])
	assert.Equal(t, `eval/cases.jsonl:4: case en-4: gold id ""`, problems[1])
	assert.Equal(t, `eval/cases.jsonl:5: case en-5: gold id "gone"`, problems[2])
}

// Test cases whose names are one once written (a character XML cannot hold is
// U+FFFD) get a number, the first its name as it was: a consumer keeps only the
// first case of a name, and the second may be the one that failed.
func TestNamesStayDistinct(t *testing.T) {
	out := string(render(t, junit.Suite{Name: "retrieval-gate check", Cases: []junit.Case{
		{Class: "c", Name: "floor@locale:xx\x01", Status: "pass"},
		{Class: "c", Name: "floor@locale:xx\x02", Status: "fail", Message: "m", Detail: "d"},
		{Class: "c", Name: "floor@locale:xx\uFFFD (2)", Status: "pass"},
		{Class: "other", Name: "floor@locale:xx\x03", Status: "pass"},
	}}))
	assert.Contains(t, out, `<testcase name="floor@locale:xx�" classname="c"/>`)
	assert.Contains(t, out, `<testcase name="floor@locale:xx� (2)" classname="c">`)
	assert.Contains(t, out, `<testcase name="floor@locale:xx� (2) (2)" classname="c"/>`)
	assert.Contains(t, out, `<testcase name="floor@locale:xx�" classname="other"/>`, "another class's name is its own")
}

// The problems beyond those the result keeps are one failing case that counts them.
func TestCheckMoreProblems(t *testing.T) {
	s := junit.Check(checkResult(t, 1))
	last := s.Cases[len(s.Cases)-1]
	assert.Equal(t, "more integrity problems", last.Name)
	assert.Equal(t, "2 more integrity problems not listed (the first 1 are)", last.Message)
	assert.Equal(t, "fail", string(last.Status))
}

func TestDeterministic(t *testing.T) {
	first := render(t, junit.Compare(compareResult(t)))
	assert.Equal(t, string(first), string(render(t, junit.Compare(compareResult(t)))))
}

// tool finds a command the validation needs; without it the test skips, except
// under CI, where it fails (.ci/run installs it).
func tool(t *testing.T, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found (%s); .ci/run installs it", name, why)
		}
		t.Skipf("%s not found (%s): skipping", name, why)
	}
	return p
}

// Every report is valid against the JUnit schema (testdata/junit.xsd), as
// libxml2's xmllint checks it (Debian's libxml2-utils).
func TestSchemaValid(t *testing.T) {
	xmllint := tool(t, "xmllint", "Debian's libxml2-utils")
	dir := t.TempDir()
	for name, doc := range map[string][]byte{
		"check.xml":      render(t, junit.Check(checkResult(t, 0))),
		"check-more.xml": render(t, junit.Check(checkResult(t, 1))),
		"compare.xml":    render(t, junit.Compare(compareResult(t))),
		"empty.xml":      render(t, junit.Suite{Name: "retrieval-gate compare"}),
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, doc, 0o644))
		out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
		require.NoError(t, err, "%s: %s", name, out)
	}
	// The schema is not one that accepts anything.
	bad := filepath.Join(dir, "bad.xml")
	require.NoError(t, os.WriteFile(bad, []byte(`<testsuites><testsuite name="x" tests="one" failures="0" errors="0"><testcase/></testsuite></testsuites>`), 0o644))
	out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), bad).CombinedOutput()
	assert.Error(t, err, "%s", out)
}

type consumed struct {
	Total, Passed, Failed, Skipped int
	Suites                         []struct {
		Name                           string
		Total, Passed, Failed, Skipped int
		Cases                          []struct{ Name, Status, Failure string }
	}
}

// consume reads a report with the pinned JUnit parser of tools/junit (node).
func consume(t *testing.T, doc []byte) consumed {
	t.Helper()
	node := tool(t, "node", "Node.js, for the JUnit parser of tools/junit")
	modules, err := filepath.Abs(filepath.Join("..", "..", "..", "tools", "junit", "node_modules"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(modules, "test-results-parser")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tools/junit is not installed (npm ci in tools/junit; .ci/run does it): %v", err)
		}
		t.Skipf("tools/junit is not installed (cd tools/junit && npm ci): skipping")
	}
	path := filepath.Join(t.TempDir(), "report.xml")
	require.NoError(t, os.WriteFile(path, doc, 0o644))
	cmd := exec.Command(node, filepath.Join("testdata", "consume.js"), path)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var c consumed
	require.NoError(t, json.Unmarshal(out, &c))
	return c
}

// A real JUnit consumer reads what a CI's test view shows: the counts, each
// case's status and the failure's message.
func TestConsumer(t *testing.T) {
	r := checkResult(t, 0)
	s := junit.Check(r)
	c := consume(t, render(t, s))
	require.Len(t, c.Suites, 1)
	got := c.Suites[0]
	assert.Equal(t, "retrieval-gate check", got.Name)
	want := map[string]int{}
	for _, k := range s.Cases {
		want[string(k.Status)]++
	}
	assert.Equal(t, want["fail"], got.Failed)
	assert.Equal(t, want["off"], got.Skipped)
	assert.Equal(t, want["pass"], got.Passed)
	require.Len(t, got.Cases, len(s.Cases))
	status := map[string]string{"pass": "PASS", "fail": "FAIL", "off": "SKIP"}
	for i, k := range s.Cases {
		assert.Equal(t, status[string(k.Status)], got.Cases[i].Status, k.Name)
		if k.Status == "fail" {
			assert.Equal(t, strings.ToValidUTF8(got.Cases[i].Failure, ""), got.Cases[i].Failure)
		}
	}
	assert.Equal(t, `eval/cases.jsonl:5: case en-5: gold id "gone"`, got.Cases[len(got.Cases)-1].Name)
	assert.Equal(t, `eval/cases.jsonl:5: case en-5: gold id "gone": unknown card`, got.Cases[len(got.Cases)-1].Failure)

	cc := consume(t, render(t, junit.Compare(compareResult(t))))
	require.Len(t, cc.Suites, 1)
	assert.Equal(t, 2, cc.Suites[0].Total)
	assert.Equal(t, 2, cc.Failed+cc.Passed)
}

// Whatever the names and messages hold, the document is well-formed XML whose
// attributes and text read back as written (but for the characters XML cannot
// hold, and line breaks in attributes).
func FuzzWrite(f *testing.F) {
	f.Add("case <1> & \"2\"", "gold ]]> \x00\x1b\u2028", "line\nbreak\ttab")
	f.Add("\xff\xfe", "\U0010FFFF\uFFFE", "&amp;")
	f.Fuzz(func(t *testing.T, name, message, detail string) {
		s := junit.Suite{Name: name, Properties: [][2]string{{name, message}}, Cases: []junit.Case{
			{Class: "c", Name: name, Status: "fail", Type: "gate", Message: message, Detail: detail},
			{Class: "c", Name: message, Status: "off", Message: detail},
			{Class: "c", Name: detail, Status: "pass"},
		}}
		var b bytes.Buffer
		require.NoError(t, junit.Write(&b, s))
		var doc struct {
			Suites []struct {
				Name  string `xml:"name,attr"`
				Cases []struct {
					Name    string `xml:"name,attr"`
					Failure *struct {
						Message string `xml:"message,attr"`
						Text    string `xml:",chardata"`
					} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		require.NoError(t, xml.Unmarshal(b.Bytes(), &doc), "%s", b.String())
		require.Len(t, doc.Suites, 1)
		require.Len(t, doc.Suites[0].Cases, 3)
		plain := func(s string, attr bool) string {
			var o strings.Builder
			s = strings.ToValidUTF8(s, "\uFFFD")
			if !attr {
				// XML reads a line end written as CR LF as one line feed
				// (end-of-line handling, XML 1.0 section 2.11), before the
				// lone carriage returns below.
				s = strings.ReplaceAll(s, "\r\n", "\n")
			}
			for _, r := range s {
				switch {
				case attr && (r == '\t' || r == '\n' || r == '\r'):
					o.WriteByte(' ')
				case r == '\t' || r == '\n' || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || r >= 0x10000:
					o.WriteRune(r)
				case r == '\r':
					o.WriteByte('\n') // XML reads a carriage return in text as a line feed
				default:
					o.WriteRune('\uFFFD')
				}
			}
			return o.String()
		}
		assert.Equal(t, plain(name, true), doc.Suites[0].Name)
		assert.Equal(t, plain(name, true), doc.Suites[0].Cases[0].Name)
		require.NotNil(t, doc.Suites[0].Cases[0].Failure)
		assert.Equal(t, plain(message, true), doc.Suites[0].Cases[0].Failure.Message)
		assert.Equal(t, plain(detail, false), strings.ReplaceAll(doc.Suites[0].Cases[0].Failure.Text, "\r", "\n"))
	})
}

// withProblems is checkResult's gates with n listed integrity problems of the
// given total, each id idBytes long.
func withProblems(t *testing.T, n int, total int64, idBytes int) *gate.Result {
	t.Helper()
	r := checkResult(t, 0)
	r.Integrity.Problems = make([]gate.Problem, n)
	for i := range r.Integrity.Problems {
		id := fmt.Sprintf("c-%07d", i)
		if idBytes > len(id) {
			id += strings.Repeat("ü<&\"", idBytes/5)
		}
		r.Integrity.Problems[i] = gate.Problem{File: "eval/cases.jsonl", Line: i + 1, CaseID: id, GoldID: "gold-" + id, Kind: gate.UnknownCard}
	}
	r.Integrity.ProblemsTotal = total
	return r
}

type written struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// The JUnit report of check is bounded whatever the run: one test case per
// gate and per listed integrity problem, never per case, so 1,000,000 cases
// with 1,000,000 problems write the gates, the result's first 10,000 problems
// and one failing case that counts the rest; and ids of any length keep the
// file under MaxBytes (10 MiB, a third of the 30 MB GitLab takes of one JUnit
// file), by listing fewer problems. The suite's counts are the cases written,
// and the last one says how many problems were left out.
func TestCheckBounded(t *testing.T) {
	tests := []struct {
		name    string
		idBytes int
		all     bool // every problem the result lists is written
	}{
		{"short ids: every listed problem", 0, true},
		{"4,000-byte ids: fewer, within the bound", 4000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := withProblems(t, gate.DefaultMaxProblems, 1_000_000, tt.idBytes)
			s := junit.Check(r)
			doc := render(t, s)
			assert.LessOrEqual(t, len(doc), junit.MaxBytes)
			var w written
			require.NoError(t, xml.Unmarshal(doc, &w))
			require.Len(t, w.Suites, 1)
			got := w.Suites[0]
			gates := len(r.Gates)
			listed := len(got.Cases) - gates - 1
			failures, skipped := 0, 0
			for _, c := range got.Cases {
				if c.Failure != nil {
					failures++
				}
				if c.Skipped != nil {
					skipped++
				}
			}
			assert.Equal(t, len(got.Cases), got.Tests, "tests counts the cases written")
			assert.Equal(t, failures, got.Failures)
			assert.Equal(t, skipped, got.Skipped)
			assert.Equal(t, w.Tests, got.Tests)
			assert.Equal(t, w.Failures, got.Failures)
			last := got.Cases[len(got.Cases)-1]
			assert.Equal(t, "more integrity problems", last.Name)
			require.NotNil(t, last.Failure)
			if tt.all {
				assert.Equal(t, gate.DefaultMaxProblems, listed)
				assert.Equal(t, "990000 more integrity problems not listed (the first 10000 are)", last.Failure.Message)
				return
			}
			assert.Greater(t, listed, 1000)
			assert.Less(t, listed, gate.DefaultMaxProblems)
			assert.Equal(t, fmt.Sprintf("%d more integrity problems not listed (the first %d are: a JUnit report is kept under 10 MiB; the JSON report lists them)", 1_000_000-listed, listed), last.Failure.Message)
			name := got.Cases[gates].Name
			assert.Less(t, len(name), 3*300, "each id is cut in a name: %q", name)
			assert.Contains(t, name, "…")
		})
	}
}

// The bound is met by listing fewer problems: a lower one lists fewer, and the
// document is still valid and read whole by a real consumer.
func TestCheckBoundLowered(t *testing.T) {
	defer junit.SetMaxBytes(64 << 10)()
	r := withProblems(t, 1000, 1000, 0)
	doc := render(t, junit.Check(r))
	assert.LessOrEqual(t, len(doc), 64<<10)
	assert.Contains(t, string(doc), "more integrity problems not listed (the first ")
	if _, err := exec.LookPath("xmllint"); err == nil {
		path := filepath.Join(t.TempDir(), "bounded.xml")
		require.NoError(t, os.WriteFile(path, doc, 0o644))
		out, err := exec.Command("xmllint", "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	c := consume(t, doc)
	require.Len(t, c.Suites, 1)
	assert.Len(t, c.Suites[0].Cases, strings.Count(string(doc), "<testcase "))
	assert.Equal(t, strings.Count(string(doc), "<failure "), c.Suites[0].Failed)
	assert.Equal(t, "FAIL", c.Suites[0].Cases[len(c.Suites[0].Cases)-1].Status, "the case that counts the rest fails")
}

// gateResult is a.ResultContext with a context that does not end.
func gateResult(a *gate.Accumulator, cfg gate.Config) *gate.Result {
	res, err := a.ResultContext(context.Background(), cfg)
	if err != nil {
		panic(err) // a context that does not end ends nothing
	}
	return res
}
