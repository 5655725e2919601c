package casefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// refCase is what a cases line means, decoded independently with encoding/json:
// the reference the scanner is checked against (differential tests and fuzzing).
type refCase struct {
	ID, Locale, Type, Query string
	Cluster                 string
	Gold, Relevant          []string
	Retrieved               []Retrieved
	HasRetrieved            bool
	Scores                  map[string]float64
	Unknown                 []string // sorted
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		if v {
			return "true"
		}
		return "false"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

func refFloat(n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// refParse decodes line with encoding/json under the rules of the cases format.
// malformed is true when encoding/json rejects the line; otherwise msg is the
// expected error message ("" when the case is valid).
func refParse(line []byte) (c refCase, msg string, malformed bool) {
	if key, off, dup := refDuplicate(line); dup {
		return c, fmt.Sprintf("duplicate key %s at column %d", jsonpos.QuoteKey([]byte(key)), off+1), false
	}
	if !json.Valid(line) {
		return c, "", true
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(fmt.Sprintf("valid JSON failed to decode: %v", err))
	}
	o, ok := v.(map[string]any)
	if !ok {
		return c, "a case must be a JSON object, got " + jsonTypeOf(v), false
	}
	var errs []string
	str := func(name string, dst *string, nullOK bool) {
		val, ok := o[name]
		if !ok || (val == nil && nullOK) {
			return
		}
		if s, ok := val.(string); ok {
			*dst = s
			return
		}
		errs = append(errs, fmt.Sprintf("field %q must be a string, got %s", name, jsonTypeOf(val)))
	}
	str("id", &c.ID, false)
	str("locale", &c.Locale, true)
	str("type", &c.Type, true)
	str("query", &c.Query, true)
	if c.Type == "" {
		c.Type = "golden"
	}
	ids := func(name string) (out []string) {
		val, ok := o[name]
		if !ok || val == nil {
			return nil
		}
		arr, ok := val.([]any)
		if !ok {
			errs = append(errs, fmt.Sprintf("field %q must be an array of card ids, got %s", name, jsonTypeOf(val)))
			return nil
		}
		var first string
		for n, g := range arr {
			switch g := g.(type) {
			case string:
				out = append(out, g)
			default:
				if first == "" {
					first = fmt.Sprintf("%s[%d] must be a string, got %s", name, n, jsonTypeOf(g))
				}
			}
		}
		if first != "" {
			errs = append(errs, first)
		}
		return out
	}
	c.Gold = ids("must_cite_one_of")
	if val, ok := o["retrieved"]; ok && val != nil {
		if arr, ok := val.([]any); ok {
			c.HasRetrieved = true
			var first string
			fail := func(format string, args ...any) {
				if first == "" {
					first = fmt.Sprintf(format, args...)
				}
			}
			for n, e := range arr {
				switch e := e.(type) {
				case string:
					if e == "" {
						fail("retrieved[%d] is an empty string", n)
						continue
					}
					c.Retrieved = append(c.Retrieved, Retrieved{ID: e})
				case map[string]any:
					var r Retrieved
					idv, hasID := e["id"]
					ids, isStr := idv.(string)
					switch {
					case hasID && !isStr:
						fail("retrieved[%d].id must be a string, got %s", n, jsonTypeOf(idv))
						continue
					case hasID && ids == "":
						fail("retrieved[%d].id is empty", n)
						continue
					case !hasID:
						fail("retrieved[%d] has no \"id\"", n)
						continue
					}
					r.ID = ids
					if pv, ok := e["parent_id"]; ok && pv != nil {
						ps, ok := pv.(string)
						if !ok {
							fail("retrieved[%d].parent_id must be a string, got %s", n, jsonTypeOf(pv))
							continue
						}
						r.ParentID = ps
					}
					if sv, ok := e["score"]; ok && sv != nil {
						num, ok := sv.(json.Number)
						if !ok {
							fail("retrieved[%d].score must be a number, got %s", n, jsonTypeOf(sv))
							continue
						}
						f, ok := refFloat(num)
						if !ok {
							fail("retrieved[%d].score %s is out of range", n, num)
							continue
						}
						r.Score, r.HasScore = f, true
					}
					c.Retrieved = append(c.Retrieved, r)
				default:
					fail("retrieved[%d] must be a card id string or an object, got %s", n, jsonTypeOf(e))
				}
			}
			if first != "" {
				errs = append(errs, first)
			}
		} else {
			errs = append(errs, "field \"retrieved\" must be an array, got "+jsonTypeOf(val))
		}
	}
	hasScores := false
	if val, ok := o["scores"]; ok && val != nil {
		if so, ok := val.(map[string]any); ok {
			hasScores = true
			c.Scores = map[string]float64{}
			keys := make([]string, 0, len(so))
			for k := range so {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var first string
			for _, k := range keys {
				switch sv := so[k].(type) {
				case nil:
				case json.Number:
					if f, ok := refFloat(sv); ok {
						c.Scores[k] = f
					} else if first == "" {
						first = fmt.Sprintf("scores.%s %s is out of range", k, sv)
					}
				default:
					if first == "" {
						first = fmt.Sprintf("scores.%s must be a number, got %s", k, jsonTypeOf(sv))
					}
				}
			}
			if first != "" {
				errs = append(errs, first)
			}
		} else {
			errs = append(errs, "field \"scores\" must be an object, got "+jsonTypeOf(val))
		}
	}
	c.Relevant = ids("relevant_ids")
	str("cluster", &c.Cluster, true)
	if len(errs) > 0 {
		return c, errs[0], false
	}
	for k := range o {
		switch k {
		case "id", "locale", "type", "query", "cluster", "must_cite_one_of", "relevant_ids", "retrieved", "scores", "retrieval", "generator", "query_style":
		default:
			c.Unknown = append(c.Unknown, k)
		}
	}
	sort.Strings(c.Unknown)
	if _, ok := o["id"]; !ok {
		if _, ragas := o["user_input"]; ragas {
			return c, "case has no \"id\" (it looks like a ragas record: convert the file with `retrieval-gate import --format ragas`)", false
		}
		return c, "case has no \"id\"", false
	}
	if c.ID == "" {
		return c, "case \"id\" is empty", false
	}
	if c.HasRetrieved && hasScores {
		return c, fmt.Sprintf("case %q has both \"retrieved\" and \"scores\"; give one", c.ID), false
	}
	return c, "", false
}

// toRef projects a parsed Case onto the reference's fields.
func toRef(c *Case) refCase {
	r := refCase{ID: c.ID, Locale: c.Locale, Type: c.Type, Query: c.Query, Cluster: c.Cluster,
		HasRetrieved: c.HasRetrieved, Scores: c.Scores}
	if len(c.Gold) > 0 {
		r.Gold = append([]string(nil), c.Gold...)
	}
	if len(c.Relevant) > 0 {
		r.Relevant = append([]string(nil), c.Relevant...)
	}
	if len(c.Retrieved) > 0 {
		r.Retrieved = append([]Retrieved(nil), c.Retrieved...)
	}
	if len(c.Unknown) > 0 {
		r.Unknown = append([]string(nil), c.Unknown...)
		sort.Strings(r.Unknown)
	}
	return r
}

// sameRef compares two refCases, floats bit for bit.
func sameRef(a, b refCase) bool {
	if a.ID != b.ID || a.Locale != b.Locale || a.Type != b.Type || a.Query != b.Query || a.Cluster != b.Cluster ||
		a.HasRetrieved != b.HasRetrieved || len(a.Gold) != len(b.Gold) ||
		strings.Join(a.Relevant, "\x00") != strings.Join(b.Relevant, "\x00") || len(a.Relevant) != len(b.Relevant) ||
		len(a.Retrieved) != len(b.Retrieved) || (a.Scores == nil) != (b.Scores == nil) || len(a.Scores) != len(b.Scores) ||
		strings.Join(a.Unknown, "\x00") != strings.Join(b.Unknown, "\x00") {
		return false
	}
	for i := range a.Gold {
		if a.Gold[i] != b.Gold[i] {
			return false
		}
	}
	for i := range a.Retrieved {
		x, y := a.Retrieved[i], b.Retrieved[i]
		if x.ID != y.ID || x.ParentID != y.ParentID || x.HasScore != y.HasScore ||
			math.Float64bits(x.Score) != math.Float64bits(y.Score) {
			return false
		}
	}
	for k, v := range a.Scores {
		w, ok := b.Scores[k]
		if !ok || math.Float64bits(v) != math.Float64bits(w) {
			return false
		}
	}
	return true
}

// refDuplicate walks the first JSON value of data with encoding/json's tokenizer,
// in input order, and returns the first repeated key of an object and the offset
// of its opening quote, unless a syntax error comes first.
func refDuplicate(data []byte) (key string, off int, dup bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number past float64's range (1e700) is not an error of the walk
	var walk func() (string, int, bool, error)
	walk = func() (string, int, bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", 0, false, err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return "", 0, false, nil
		}
		seen := map[string]bool{}
		for dec.More() {
			if d == '{' {
				at := int(dec.InputOffset())
				for at < len(data) && (data[at] == ' ' || data[at] == '\t' || data[at] == '\r' || data[at] == '\n' || data[at] == ',') {
					at++
				}
				kt, err := dec.Token()
				if err != nil {
					return "", 0, false, err
				}
				k := kt.(string)
				if seen[k] {
					return k, at, true, nil
				}
				seen[k] = true
			}
			if k, at, dup, err := walk(); err != nil || dup {
				return k, at, dup, err
			}
		}
		_, err = dec.Token()
		return "", 0, false, err
	}
	key, off, dup, _ = walk()
	return key, off, dup
}
