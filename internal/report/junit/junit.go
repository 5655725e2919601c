// Package junit writes a command's gates as a JUnit XML report, the test-report
// format that Jenkins, GitLab, Azure Pipelines, Buildkite and CircleCI show in
// their own test views (check --junit, compare --junit).
//
// The document follows the JUnit schema those tools read (Jenkins' and Ant's:
// testsuites > testsuite > testcase with failure or skipped; testdata/junit.xsd
// is that schema, written from its documentation, and the tests validate every
// report against it and read it back with a real JUnit parser). One test suite
// per command; one test case per gate (a failed gate fails, an off gate is
// skipped, a passing one passes) and, for check, one per integrity problem (a
// gold id of a case that is not a card of the knowledge base), named by its
// file:line. No time or timestamp is written, so the same inputs give the same
// bytes.
//
// It does no arithmetic: the gates and problems come from the domain results,
// their words from gatetable.Reason and checkreport.ProblemReason; the counts
// of the suite are the test cases written. check's document is kept under
// MaxBytes (10 MiB) by listing fewer problems, the last case counting the rest.
package junit

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// Suite is one command's test suite before it is written.
type Suite struct {
	Name       string // "retrieval-gate check"
	Properties [][2]string
	Cases      []Case
}

// Case is one test case: a gate, or an integrity problem.
type Case struct {
	Class, Name string
	Status      outcome.Status // pass, fail or off (skipped)
	Type        string         // the failure's type: gate or integrity
	Message     string         // the failure's or skip's message
	Detail      string         // the failure's text
}

// MaxBytes bounds the document Check's suite is written as: a third of the
// 30 MB GitLab takes of one JUnit file (GitLab's "Unit test reports": each
// file under 30 MB, all of a job's JUnit files under 100 MB), which leaves room
// for the job's other reports, and far below what a test view reads without
// choking. It is met by listing fewer integrity problems: the gates are always
// written whole (their number is the command's own gates and floors).
const MaxBytes = 10 << 20

// maxBytes is the bound in force (a test lowers it to exercise it quickly).
var maxBytes = MaxBytes

// maxIDBytes bounds each of a problem's file, case id and gold id in its test
// case's name (a longer one is cut, "…" marking the cut; the JSON report has
// them whole), so that one long id cannot take the room of many problems.
const maxIDBytes = 256

// Check is the suite of check: its gates, then one case per integrity
// problem listed by the result (the first gate.DefaultMaxProblems, file
// order) while the document stays within MaxBytes and, when there were more,
// one failing case that counts the rest. The suite's counts are those of the
// cases written, as every consumer counts them; that last case says how many
// problems were left out, so the suite fails whenever a problem does.
func Check(r *gate.Result) Suite {
	s := Suite{Name: "retrieval-gate check", Properties: [][2]string{
		{"verdict", string(r.Verdict())}, {"k", strconv.Itoa(r.K)}, {"cases", strconv.FormatInt(r.Total, 10)},
	}}
	s.Cases = gateCases("retrieval-gate.check", r.Gates)
	// What the document takes but for the problems: its head and tail, the
	// properties, the gates, and the room of the last case that counts the rest.
	size := 4096 + len(s.Name)
	for _, p := range s.Properties {
		size += 64 + len(attr(p[0])) + len(attr(p[1]))
	}
	for _, c := range s.Cases {
		size += caseBytes(c)
	}
	listed, byBytes := 0, false
	for _, p := range r.Integrity.Problems {
		loc := shortID(p.File)
		if p.Line > 0 {
			loc += ":" + strconv.Itoa(p.Line)
		}
		name := format.SanitizeText(loc) + ": " + format.CaseGold(shortID(p.CaseID), shortID(p.GoldID))
		msg := name + ": " + checkreport.ProblemReason(p.Kind)
		c := Case{Class: "retrieval-gate.check.integrity", Name: name, Status: outcome.Fail, Type: "integrity", Message: msg, Detail: msg}
		if size += caseBytes(c); size > maxBytes {
			byBytes = true
			break
		}
		s.Cases = append(s.Cases, c)
		listed++
	}
	if rest := r.Integrity.ProblemsTotal - int64(listed); rest > 0 {
		msg := fmt.Sprintf("%s not listed (the first %d are)", format.Count(rest, "more integrity problem", "more integrity problems"), listed)
		if byBytes {
			msg = fmt.Sprintf("%s not listed (the first %d are: a JUnit report is kept under %d MiB; the JSON report lists them)", format.Count(rest, "more integrity problem", "more integrity problems"), listed, maxBytes>>20)
		}
		s.Cases = append(s.Cases, Case{Class: "retrieval-gate.check.integrity", Name: "more integrity problems",
			Status: outcome.Fail, Type: "integrity", Message: msg, Detail: msg})
	}
	return s
}

// shortID is s cut to maxIDBytes bytes (format.CutBytes).
func shortID(s string) string { return format.CutBytes(s, maxIDBytes) }

// caseBytes is what c takes written, and room for the number that may tell
// its name from another's.
func caseBytes(c Case) int { return len(caseXML(c, attr(c.Name))) + 16 }

// Compare is the suite of compare: one case per gate (none when compare is
// not a gate: --gate-strategy without --floor or --fail-if-beaten).
func Compare(r *compare.Result) Suite {
	return Suite{Name: "retrieval-gate compare",
		Properties: [][2]string{{"verdict", string(r.Verdict())}, {"recommended", r.Recommended}, {"k", strconv.Itoa(r.K)}},
		Cases:      gateCases("retrieval-gate.compare", r.Gates)}
}

// maxReasonBytes bounds a gate's reason in its test case (a longer one is
// cut, "…" marking the cut; the JSON report has it whole). A reason names
// groups of the data ("no such group in the data (groups: …)" lists up to
// gate.MaxGroups types and as many locales, whose names the cases choose), so
// a few long names made one gate's case, written twice (message and text),
// larger than the bound the whole document is kept under (MaxBytes). The
// longest reasons of real runs (a Holm-adjusted drop, a hundred short group
// names) take a few KiB.
const maxReasonBytes = 16 << 10

// gateCases is one case per gate, in report order.
func gateCases(class string, gates outcome.Gates) []Case {
	out := make([]Case, 0, len(gates))
	for _, e := range gatetable.FromOutcome(gates) {
		e.Reason = format.CutBytes(e.Reason, maxReasonBytes)
		name := e.Name
		if e.Group != "" && !strings.Contains(name, e.Group) {
			name += " (" + e.Group + ")"
		}
		c := Case{Class: class, Name: format.SanitizeText(name), Status: e.Status, Type: "gate"}
		switch e.Status {
		case outcome.Fail:
			c.Message = failureMessage(e)
			c.Detail = gateDetail(e)
		case outcome.Off:
			c.Message = orDefault(e.Reason, "off: not asked for")
		}
		out = append(out, c)
	}
	return out
}

// A failed gate's value and threshold are written unrounded, as the JSON
// report writes them (format.AppendFloat: the shortest form that reads back
// as the same float64, null when absent): a test view's message and text are
// read by machines too (a CI's test reporter, a script over the XML), and a
// figure rounded to 3 decimals may read as equal to its threshold. The
// reason, the words every report shows, follows them with its rounded figures.

// failureMessage is a failed gate's message: its measure, value, threshold
// and n, then its reason ("retrieval_hit_at_k = 0.6410256410256411,
// threshold 0.7, n = 39; reason: locale:pt-BR mean 0.641 is below the floor
// 0.700; …"); a gate on no measure (integrity) has its reason alone.
func failureMessage(e gatetable.Entry) string {
	reason := orDefault(e.Reason, "the gate failed")
	if e.Measure == "" {
		return reason
	}
	// A regression gate's value is the drop of its measure from the baseline
	// (its threshold the drop tolerated), as the JSON has it: "hit = 0.06" of
	// a hit@k that fell from 0.985 to 0.924 would state a hit@k that is not.
	label := e.Measure
	if regressionGate(e.Name) {
		label = "drop of " + e.Measure
	}
	var parts []string
	if v := unrounded(e.Value); v != "null" {
		parts = append(parts, label+" = "+v)
	} else {
		parts = append(parts, label)
	}
	if t := unrounded(e.Threshold); t != "null" {
		parts = append(parts, "threshold "+t)
	}
	if e.N > 0 {
		parts = append(parts, fmt.Sprintf("n = %d", e.N))
	}
	return strings.Join(parts, ", ") + "; reason: " + reason
}

// regressionGate reports whether a gate is one of check --baseline's
// regression gates (max_drop_hit, max_drop_recall, max_drop_ndcg and
// max_drop:MEASURE@GROUP; docs/baseline.md), whose value is a drop.
func regressionGate(name string) bool {
	return strings.HasPrefix(name, "max_drop_") || strings.HasPrefix(name, "max_drop:")
}

// unrounded is a gate's figure as the JSON writes it: "null" when absent.
func unrounded(f *format.Float) string {
	if f == nil {
		return "null"
	}
	return string(format.AppendFloat(nil, f.V()))
}

// gateDetail is a failed gate's measure, value, threshold (unrounded), n and
// reason, one per line. A field is one line whatever it holds: a group's name
// comes from the cases (a type, a locale), and one with a line break
// ("a\nvalue: 1") would add lines of its own that a script reading the
// text's fields takes for the gate's; its line breaks and other control
// characters are spaces, as in the test case's name and message.
func gateDetail(e gatetable.Entry) string {
	var b strings.Builder
	if e.Measure != "" {
		fmt.Fprintf(&b, "measure: %s\nvalue: %s\nthreshold: %s\n", format.SanitizeText(e.Measure), unrounded(e.Value), unrounded(e.Threshold))
	}
	if e.N > 0 {
		fmt.Fprintf(&b, "n: %d\n", e.N)
	}
	if e.Group != "" {
		fmt.Fprintf(&b, "group: %s\n", format.SanitizeText(e.Group))
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", format.SanitizeText(e.Reason))
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Write writes the suites as one JUnit XML document. Attribute values and
// text are escaped with the five named entities only (some consumers decode no
// numeric references); a character XML 1.0 cannot hold becomes U+FFFD, and a
// line break or tab inside an attribute a space (as an XML parser would read it).
func Write(w io.Writer, suites ...Suite) error {
	type counts struct{ tests, failures, skipped int }
	per := make([]counts, len(suites))
	var all counts
	for i, s := range suites {
		for _, c := range s.Cases {
			per[i].tests++
			switch c.Status {
			case outcome.Fail:
				per[i].failures++
			case outcome.Off:
				per[i].skipped++
			}
		}
		all.tests += per[i].tests
		all.failures += per[i].failures
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	// No skipped count on testsuites: Jenkins' xUnit schema (junit-10.xsd)
	// refuses the attribute there, and the plugin then skips the whole file;
	// each testsuite carries its own.
	fmt.Fprintf(&b, "<testsuites name=\"retrieval-gate\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", all.tests, all.failures)
	for i, s := range suites {
		fmt.Fprintf(&b, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n", attr(s.Name), per[i].tests, per[i].failures, per[i].skipped)
		if len(s.Properties) > 0 {
			b.WriteString("    <properties>\n")
			for _, p := range s.Properties {
				fmt.Fprintf(&b, "      <property name=\"%s\" value=\"%s\"/>\n", attr(p[0]), attr(p[1]))
			}
			b.WriteString("    </properties>\n")
		}
		names := map[string]bool{} // the names written, as written
		for _, c := range s.Cases {
			// Two names that are one once written (characters XML cannot
			// hold become U+FFFD) are told apart: a consumer keeps the first
			// test case of a name (GitLab: "only the first test is used").
			name := attr(c.Name)
			for n := 2; names[attr(c.Class)+"\x00"+name]; n++ {
				name = attr(fmt.Sprintf("%s (%d)", c.Name, n))
			}
			names[attr(c.Class)+"\x00"+name] = true
			b.WriteString(caseXML(c, name))
		}
		b.WriteString("  </testsuite>\n")
	}
	b.WriteString("</testsuites>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// caseXML is test case c written, named name (an attribute value).
func caseXML(c Case, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    <testcase name=\"%s\" classname=\"%s\"", name, attr(c.Class))
	switch c.Status {
	case outcome.Fail:
		fmt.Fprintf(&b, ">\n      <failure message=\"%s\" type=\"%s\">%s</failure>\n    </testcase>\n", attr(c.Message), attr(c.Type), text(c.Detail))
	case outcome.Off:
		// The reason also as the element's text: GitLab shows that, not the attribute.
		fmt.Fprintf(&b, ">\n      <skipped message=\"%s\">%s</skipped>\n    </testcase>\n", attr(c.Message), text(c.Message))
	default:
		b.WriteString("/>\n")
	}
	return b.String()
}

// attr is s as an attribute value between double quotes.
func attr(s string) string { return escape(s, true) }

// text is s as character data.
func text(s string) string { return escape(s, false) }

func escape(s string, inAttr bool) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && inAttr:
			b.WriteString("&quot;")
		case r == '\t' || r == '\n' || r == '\r':
			if inAttr {
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		case !xmlChar(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlChar reports whether XML 1.0 can hold r (its Char production).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}
