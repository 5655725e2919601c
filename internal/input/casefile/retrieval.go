package casefile

import (
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// A case's "retrieval" object is retrieve's record of how the case was
// retrieved; its "k" is the k of the run, which check reads (its k without
// --k, and the warning when another k is used). A reader that sets
// CaseParser.RetrievalK refuses, on every line, a "retrieval" that is not an
// object and a "k" that is not an integer of at least 1; null (either) is
// absent, as for the other keys of a case. The other readers skip the object.

// RetrievalK is the k of a "retrieval" object's "k" given as its JSON number
// (valid JSON): ok when it is written as an integer (no fraction, no
// exponent) of at least 1 that fits an int, the k check's --k takes.
func RetrievalK(num []byte) (k int, ok bool) {
	n, err := strconv.Atoi(string(num))
	return n, err == nil && n >= 1
}

// scanRetrieval validates the "retrieval" value at v, a member of the case
// object, exactly as Skip(v, 1) does (the same syntax errors, a repeated key
// included) and returns the offset after it and what is wrong with it as the
// record of the run's k ("" when nothing is). It is one pass: the general
// scanner and parseFast both take it, and neither scans the value twice.
func (p *CaseParser) scanRetrieval(v int) (end int, msg string, err error) {
	s := &p.s
	b := s.B
	switch b[v] {
	case '{':
	case 'n':
		end, err = s.Skip(v, 1)
		return end, "", err
	default:
		end, err = s.Skip(v, 1)
		return end, `retrieval.k cannot be read: field "retrieval" must be an object, got ` + jsonpos.TypeName(b[v]), err
	}
	// Skip's object, at depth 1.
	i := s.WS(v + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, "", nil
	}
	s.OpenObject()
	for {
		key, at, err := s.Key(i)
		if err != nil {
			s.CloseObject()
			return 0, "", err
		}
		isK := len(key) == 1 && key[0] == 'k'
		if i, err = s.Skip(at, 2); err != nil {
			s.CloseObject()
			return 0, "", err
		}
		if isK { // once: a repeated key is an error
			msg = retrievalKProblem(b[at:i])
		}
		var done bool
		if i, done, err = s.Next(i, '}', "after object value"); err != nil || done {
			s.CloseObject()
			return i, msg, err
		}
	}
}

// retrievalKProblem is what is wrong with the (valid) JSON value of a
// "retrieval" object's "k", "" when nothing is.
func retrievalKProblem(val []byte) string {
	got := jsonpos.TypeName(val[0])
	switch got {
	case "null":
		return ""
	case "number":
		if _, ok := RetrievalK(val); ok {
			return ""
		}
		got = jsonpos.ShownNumber(val)
	case "string":
		got = jsonpos.ShownString(jsonpos.AppendUnquoted(nil, val[1:len(val)-1]))
	}
	return "retrieval.k must be an integer of at least 1 (the k the run was retrieved at), got " + got
}
