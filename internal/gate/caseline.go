package gate

import (
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// AppendCaseLine appends the --cases-out line of one case to dst, the case as
// scored: data that check reads back, as the baseline's lines are
// (baseline.AppendCaseLine), not words of a report:
// {"id", "locale", "type", "query", "must_cite_one_of", "relevant_ids", "scores"}
// with keys in that order (locale, query, must_cite_one_of and relevant_ids only
// when the case has them),
// then a newline. scores holds every registered measure of a scored case, a precomputed case's
// scores as given, or is {} for a case without gold. `check` reads the file back
// as precomputed scores; floats keep full precision so the aggregates match.
func AppendCaseLine(dst []byte, c *casefile.Case, r *CaseResult) []byte {
	if dst == nil {
		dst = make([]byte, 0, 160+len(c.ID)+len(c.Query)+24*(len(c.Gold)+len(c.Relevant)))
	}
	dst = append(dst, `{"id":`...)
	dst = format.AppendJSONString(dst, c.ID)
	if c.Locale != "" {
		dst = append(dst, `,"locale":`...)
		dst = format.AppendJSONString(dst, c.Locale)
	}
	dst = append(dst, `,"type":`...)
	dst = format.AppendJSONString(dst, r.Type)
	if c.Query != "" {
		dst = append(dst, `,"query":`...)
		dst = format.AppendJSONString(dst, c.Query)
	}
	dst = appendIDs(dst, `,"must_cite_one_of":[`, c.Gold)
	dst = appendIDs(dst, `,"relevant_ids":[`, c.Relevant)
	dst = append(dst, `,"scores":{`...)
	first := true
	field := func(k string, v float64) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = format.AppendJSONString(dst, k)
		dst = append(dst, ':')
		dst = format.AppendFloat(dst, v)
	}
	switch {
	case r.Scored && r.Extra == nil && r.AllScored():
		// The common case, keys in sorted order without sorting: no allocation.
		for _, i := range metrics.CaseKeysSorted {
			field(metrics.CaseKeys[i], r.Scores[i])
		}
	case r.Scored:
		keys := make([]string, 0, metrics.NumCase+len(r.Extra))
		for i, k := range metrics.CaseKeys {
			if r.Has[i] {
				keys = append(keys, k)
			}
		}
		for k := range r.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if i := metrics.CaseIndex(k); i >= 0 {
				field(k, r.Scores[i])
			} else {
				field(k, r.Extra[k])
			}
		}
	}
	return append(dst, "}}\n"...)
}

// appendIDs appends key (`,"name":[`) and the ids as a JSON array, when there are any.
func appendIDs(dst []byte, key string, ids []string) []byte {
	if len(ids) == 0 {
		return dst
	}
	dst = append(dst, key...)
	for i, g := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = format.AppendJSONString(dst, g)
	}
	return append(dst, ']')
}
