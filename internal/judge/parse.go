package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// MaxGrade is the top of the judge's rubric 0..MaxGrade (the 4-point scale of the published
// relevance-judging prompt this one follows); the
// qrels a judge writes use only these levels, though compare reads a wider range.
const MaxGrade = 3

// Causes of an unjudged answer.
const (
	CauseUnparseable = "unparseable"
	CauseOutOfRange  = "out_of_range"
	CauseBudget      = "budget"
)

// AnswerError is an answer that carries no valid grade.
type AnswerError struct {
	Cause  string // CauseUnparseable or CauseOutOfRange
	Detail string
}

func (e *AnswerError) Error() string { return e.Cause + ": " + e.Detail }

// maxReason bounds the reason kept from an answer, in runes.
const maxReason = 300

var finalScoreRE = regexp.MustCompile(`(?i)^[\s#*_>]*final\s+score[\s#*_]*[:=][\s#*_]*([+-]?\d+(?:\.\d+)?)[\s#*_.]*$`)

// parseAnswer reads a grade 0-3 and a short reason from an answer: a JSON object
// {"reason": string, "score": integer} (the structured answer), else a text
// whose last non-empty line is "Final score: N" (markdown emphasis and "##"
// around it allowed). Anything else, a non-integer score or a JSON object
// without an integer "score" or with a repeated key, is unparseable; an integer outside 0-3 is out of range.
//
// The model's words it returns, the reason and the answer an *AnswerError
// quotes, are passed through redact (the run's redactor: a model, or a
// server standing in for one, may echo the API key or another secret) before
// they are cut to their length, so that no piece of a secret is left at the
// cut. The answer is parsed as the model wrote it: a secret that happens to
// spell part of its structure ("score") changes nothing of the grade.
func parseAnswer(content string, redact func(string) string) (grade int, reason string, err error) {
	c := strings.TrimSpace(content)
	if strings.HasPrefix(c, "{") {
		return parseJSONAnswer(c, redact)
	}
	lines := strings.Split(c, "\n")
	last := ""
	i := len(lines) - 1
	for ; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			last = lines[i]
			break
		}
	}
	m := finalScoreRE.FindStringSubmatch(last)
	if m == nil {
		return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("no \"Final score: N\" last line in %s", quoteSnippet(redact(c)))}
	}
	g, perr := strconv.Atoi(strings.TrimPrefix(m[1], "+"))
	if perr != nil {
		return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("final score %q is not an integer", m[1])}
	}
	if g < 0 || g > MaxGrade {
		return 0, "", &AnswerError{CauseOutOfRange, fmt.Sprintf("final score %d is outside 0-3", g)}
	}
	return g, shorten(redact(strings.Join(lines[:max(i, 0)], " "))), nil
}

func parseJSONAnswer(c string, redact func(string) string) (int, string, error) {
	// jsonpos first, the one JSON rule of every input: a repeated key
	// ({"score":0,"score":3}) is refused, not read as its last value.
	var sc jsonpos.Scanner
	if err := sc.Check([]byte(c)); err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) && se.Dup {
			return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("JSON answer has a %s: %s", redact(se.Describe()), quoteSnippet(redact(c)))}
		}
		if errors.As(err, &se) && se.Cap {
			return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("JSON answer of %s: %s", redact(se.Describe()), quoteSnippet(redact(c)))}
		}
		return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("not one JSON object: %s", quoteSnippet(redact(c)))}
	}
	dec := json.NewDecoder(strings.NewReader(c))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("not one JSON object: %s", quoteSnippet(redact(c)))}
	}
	raw, ok := obj["score"]
	if !ok {
		return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("JSON answer has no \"score\": %s", quoteSnippet(redact(c)))}
	}
	raw = bytes.TrimSpace(raw)
	g, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, "", &AnswerError{CauseUnparseable, fmt.Sprintf("\"score\" %s is not an integer", quoteSnippet(redact(string(raw))))}
	}
	if g < 0 || g > MaxGrade {
		return 0, "", &AnswerError{CauseOutOfRange, fmt.Sprintf("\"score\" %d is outside 0-3", g)}
	}
	var reason string
	if r, ok := obj["reason"]; ok {
		if err := json.Unmarshal(r, &reason); err != nil {
			return 0, "", &AnswerError{CauseUnparseable, "\"reason\" is not a string"}
		}
	}
	return g, shorten(redact(reason)), nil
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxReason {
		return s
	}
	r := []rune(s)
	return string(r[:maxReason]) + "…"
}

func quoteSnippet(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return strconv.Quote(s)
}
