package junit_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/report/junit"
)

// docCase is a test case as docs/ci.md quotes it: its name, its failure's
// message and the failure's text.
type docCase struct {
	Name    string `xml:"name,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
}

func docCases(t *testing.T, report []byte) map[string]docCase {
	t.Helper()
	var doc struct {
		Suites []struct {
			Cases []docCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(report, &doc))
	out := map[string]docCase{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			out[c.Name] = c
		}
	}
	return out
}

// docs/ci.md describes the JUnit report with a check test case's name and a
// compare gate's name, message and text, the compare demo's floor on dense
// (TestGolden's compare.xml): each is what the report writes. The page named
// the compare case after bm25, beside a message about dense.
func TestCIDocExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "ci.md"))
	require.NoError(t, err)
	page := regexp.MustCompile(`\s+`).ReplaceAllString(string(data), " ") // the examples wrap
	names := regexp.MustCompile("named by the gate and its group \\(`([^`]+)`, `([^`]+)`\\)").FindStringSubmatch(page)
	require.NotNil(t, names, "docs/ci.md names a check and a compare test case")
	message := regexp.MustCompile("then the gate's reason \\(`([^`]+)…`\\)").FindStringSubmatch(page)
	require.NotNil(t, message, "docs/ci.md quotes a failure's message, cut with …")
	text := regexp.MustCompile("one per line \\(`([^`]+)`\\)").FindStringSubmatch(page)
	require.NotNil(t, text, "docs/ci.md quotes a line of a failure's text")

	check := docCases(t, render(t, junit.Check(checkResult(t, 0))))
	assert.Contains(t, check, names[1], "docs/ci.md's check test case")

	cmp := docCases(t, render(t, junit.Compare(compareResult(t))))
	c, ok := cmp[names[2]]
	require.True(t, ok, "docs/ci.md's compare test case %q is not one of the report's", names[2])
	require.NotNil(t, c.Failure, "docs/ci.md's compare test case fails")
	assert.True(t, strings.HasPrefix(c.Failure.Message, message[1]), "the report's message %q does not begin with docs/ci.md's %q", c.Failure.Message, message[1])
	assert.Contains(t, strings.Split(c.Failure.Text, "\n"), text[1], "a line of docs/ci.md's failure text")
}
