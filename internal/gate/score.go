// Package gate holds the decisions of `check`: per-case scoring against the
// knowledge base, the dataset-integrity gate, duplicate case ids, the group
// aggregates, the floors and the verdict. It does no I/O but one: past its
// memory bounds (16 MiB of case ids, 128 MiB of id hashes) the duplicate-id
// log keeps the rest in a temporary file (idlog.go, idspill.go).
package gate

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// CardSet is what the integrity checks need of a knowledge base (*kbfile.KB).
type CardSet interface {
	Has(id string) bool
}

// Problem is one integrity problem: a gold id (of must_cite_one_of, or of
// relevant_ids: its Kind says so) that does not resolve to a KB card. The
// words are the report layer's (checkreport.ProblemReason).
type Problem struct {
	File   string
	Line   int
	CaseID string
	GoldID string
	Kind   ProblemKind
}

// ProblemKind names an integrity problem.
type ProblemKind string

// The integrity problems.
const (
	// UnknownCard: a gold id of must_cite_one_of is not a card of the KB.
	UnknownCard ProblemKind = "unknown_card"
	// EmptyID: a gold id of must_cite_one_of is empty.
	EmptyID ProblemKind = "empty_id"
	// UnknownRelevant and EmptyRelevant: the same problems of an id of relevant_ids.
	UnknownRelevant ProblemKind = "unknown_relevant"
	EmptyRelevant   ProblemKind = "empty_relevant"
)

// ProblemKinds are every ProblemKind.
var ProblemKinds = []ProblemKind{UnknownCard, EmptyID, UnknownRelevant, EmptyRelevant}

// Bounds on what one case result keeps for the report.
const (
	maxQueryRunes = 300
	maxKeptIDs    = 20
)

// CaseResult is the outcome of scoring one case. It owns its data (nothing points
// into the reader's buffers) so it can cross goroutines.
type CaseResult struct {
	File   string
	Line   int
	ID     string
	Locale string // "und" when the case has none
	Type   string
	// Cluster is the case's family (its `cluster` key; "": none): the
	// groups' intervals are computed over the clusters when cases carry one.
	Cluster string

	// Scored is true when the case contributes scores: a retrieval case with
	// gold, or a precomputed case with at least one score key.
	Scored      bool
	Precomputed bool
	// WithRelevant is true when the case carries relevant_ids (a non-empty
	// id): its recall@k and nDCG@k are real recall, not a lower bound.
	WithRelevant bool
	// Scores holds the case's value of each measure of metrics.CaseMeasures;
	// Has tells which are present (all of them for a scored retrieval case).
	Scores [metrics.NumCase]float64
	Has    [metrics.NumCase]bool
	// Extra holds precomputed score keys that are not registered measures, as given.
	Extra map[string]float64

	// Kept only for missed cases (scored, hit@k = 0): the report lists them.
	Query string
	Gold  []string
	TopK  []string

	Problems []Problem
	// UnknownRetrieved counts retrieved entries whose identity is not a KB card.
	UnknownRetrieved int
	FirstUnknown     string
	// UnknownKeys are the case's top-level keys the cases format does not know.
	UnknownKeys []string

	// Out is free for the caller (e.g. the rendered --cases-out line).
	Out []byte

	// idHash is idHash(ID) when hashed: computed by the scorer while the
	// case's line is in the worker's cache (Add, serial, met it cold: most
	// of the hash's cost was the miss on the id's bytes).
	idHash uint64
	hashed bool
}

// hitIndex is the index of hit@k, the success number, in metrics.CaseMeasures.
var hitIndex = metrics.CaseIndex(metrics.KeyHit)

// Missed reports whether the case is scored and its hit@k is 0.
func (r *CaseResult) Missed() bool { return r.Scored && r.Has[hitIndex] && r.Scores[hitIndex] == 0 }

// allScored is Has of a scored retrieval case.
var allScored = func() (h [metrics.NumCase]bool) {
	for i := range h {
		h[i] = true
	}
	return h
}()

// AllScored reports whether the case has a score for every registered measure.
func (r *CaseResult) AllScored() bool { return r.Has == allScored }

// UndeterminedLocale is the group of cases without a locale (BCP 47 "und").
const UndeterminedLocale = "und"

// Scorer scores cases. ScoreInto is safe for concurrent use.
type Scorer struct {
	KB CardSet
	K  int
	// KeepMissed, when set, tells whether a missed case's query, gold and
	// top k are still wanted (Accumulator.WantsMissed); when it reports
	// false they are not copied into the result (nil: always copied). The
	// copies are the scorer's only allocation per case, garbage past the
	// accumulator's first DefaultMaxMissed.
	KeepMissed func() bool
}

// ScoreInto scores one case into r (overwritten, so callers keep results by
// value): integrity of its gold ids, every registered measure over its retrieved
// identities (or its precomputed scores as given), and the count of retrieved
// identities unknown to the KB. Errors are input errors (*input.Error).
func (s *Scorer) ScoreInto(c *casefile.Case, r *CaseResult) error {
	return s.score(c, r, nil)
}

// ScoreRanked is ScoreInto that also appends to dst the case's deduplicated
// ranked identities, the whole list (its first k are the top k it was scored
// on), and returns it: built once, for the caller's comparison with a
// baseline. It is appended for every retrieval case, with or without gold;
// nothing is appended for a case with precomputed scores.
func (s *Scorer) ScoreRanked(c *casefile.Case, r *CaseResult, dst []string) ([]string, error) {
	err := s.score(c, r, &dst)
	return dst, err
}

func (s *Scorer) score(c *casefile.Case, r *CaseResult, ranked *[]string) error {
	// Cleared in place, then set: a composite literal with the fields of c
	// (which might alias r) is built on the stack and copied, three passes
	// over the result's 300-odd bytes instead of one.
	*r = CaseResult{}
	r.File, r.Line, r.ID, r.Locale, r.Type, r.Cluster = c.File, c.Line, c.ID, c.Locale, c.Type, c.Cluster
	r.idHash, r.hashed = idHash(c.ID), true
	if len(c.Unknown) > 0 {
		r.UnknownKeys = slices.Clone(c.Unknown)
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	r.Locale = sc.canonicalLocale(r.Locale)
	if r.Type == "" {
		r.Type = "golden"
	} else {
		r.Type = sc.internType(r.Type)
	}
	// The KB behind the interface, once a case: a *kbfile.KB keys the case's
	// ids at once (KB.Keys: the retrieved identities, then the gold and the
	// relevant ids), its lookups not waiting on one another, and the keys
	// tell the ids apart without comparing their bytes: an unknown id has key
	// 0, the known ones are deduplicated and matched by their keys.
	kb, direct := s.KB.(*kbfile.KB)
	ids := sc.ranked[:0] // the retrieved identities, of a case scored here
	if c.Scores == nil {
		for i := range c.Retrieved {
			e := &c.Retrieved[i]
			id := e.ParentID
			if id == "" {
				id = e.ID
			}
			ids = append(ids, id)
		}
	}
	var keys, goldKeys, relKeys []uint64
	if direct {
		nr := len(ids)
		ids = append(ids, c.Gold...)
		ids = append(ids, c.Relevant...)
		keys = sc.keys[:0]
		if len(ids) > len(sc.keys) {
			keys = make([]uint64, len(ids))
		}
		keys = keys[:len(ids)]
		if c.Keyer != nil && c.Keyer == casefile.Keyer(kb) && len(c.RetrievedKeys) == nr {
			// Keyed by the reader, once per dictionary entry
			// (casefile.MapOptions.Keyer): the gold and relevant ids only.
			copy(keys, c.RetrievedKeys)
			kb.Keys(ids[nr:], keys[nr:])
		} else {
			kb.Keys(ids, keys)
		}
		goldKeys, relKeys = keys[nr:nr+len(c.Gold)], keys[nr+len(c.Gold):]
		ids, keys = ids[:nr], keys[:nr]
		r.checkKeyed(c, c.Gold, goldKeys, EmptyID, UnknownCard)
		r.checkKeyed(c, c.Relevant, relKeys, EmptyRelevant, UnknownRelevant)
	} else {
		r.checkIDs(s.KB.Has, c, c.Gold, EmptyID, UnknownCard)
		r.checkIDs(s.KB.Has, c, c.Relevant, EmptyRelevant, UnknownRelevant)
	}
	r.WithRelevant = slices.ContainsFunc(c.Relevant, func(id string) bool { return id != "" })

	if c.Scores != nil {
		r.Precomputed = true
		for key, v := range c.Scores {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return input.Errorf(c.File, c.Line, "scores.%s must be a finite number", key)
			}
			i := metrics.CaseIndex(key)
			if i < 0 {
				if r.Extra == nil {
					r.Extra = make(map[string]float64)
				}
				r.Extra[key] = v
				continue
			}
			if !metrics.CaseMeasures[i].Scale.InRange(v) {
				return input.Errorf(c.File, c.Line, "scores.%s must be in [0,1], got %v", key, v)
			}
			r.Has[i] = true
			r.Scores[i] = v
		}
		r.Scored = len(c.Scores) > 0
		if r.Missed() && s.keepMissed() {
			r.keepForReport(c, nil)
		}
		return nil
	}

	for i, id := range ids {
		if keys != nil && keys[i] != 0 || keys == nil && s.KB.Has(id) {
			continue
		}
		if r.UnknownRetrieved == 0 {
			r.FirstUnknown = id
		}
		r.UnknownRetrieved++
	}
	in := &sc.in
	in.TopKKeys, in.GoldKeys, in.RelevantKeys = nil, nil, nil
	topK := func(k int) []string {
		if keys != nil {
			var top []string
			top, in.TopKKeys = topKKeyed(sc.topk[:0], sc.topkKeys[:0], ids, keys, k)
			return top
		}
		return casefile.TopKIdentities(sc.topk[:0], ids, k)
	}
	var all []string
	if ranked != nil {
		// The whole deduplicated list once, also for a case without gold (the
		// baseline compares its top k); the top k is its prefix.
		all = topK(len(ids))
		*ranked = append(*ranked, all...)
	}
	if keys != nil {
		in.Gold, in.GoldKeys = appendDedupKeyed(sc.gold[:0], sc.goldKeys[:0], c.Gold, goldKeys)
	} else {
		in.Gold = metrics.AppendDedupGold(sc.gold[:0], c.Gold)
	}
	if len(in.Gold) == 0 {
		return nil
	}
	if keys != nil {
		in.Relevant, in.RelevantKeys = nil, nil
		if r.WithRelevant {
			// The gold (distinct already), then the relevant ids it lacks.
			rel, relevantKeys := append(sc.relevant[:0], in.Gold...), append(sc.relevantKeys[:0], in.GoldKeys...)
			in.Relevant, in.RelevantKeys = appendDedupKeyed(rel, relevantKeys, c.Relevant, relKeys)
		}
	} else {
		in.Relevant = metrics.AppendRelevant(sc.relevant[:0], in.Gold, c.Relevant)
	}
	if ranked != nil {
		in.TopK = all[:min(s.K, len(all))]
		if in.TopKKeys != nil {
			in.TopKKeys = in.TopKKeys[:len(in.TopK)]
		}
	} else {
		in.TopK = topK(s.K)
	}
	in.K = s.K
	metrics.ScoreCase(&r.Scores, in)
	r.Scored, r.Has = true, allScored
	if r.Missed() && s.keepMissed() {
		r.keepForReport(c, in.TopK)
	}
	return nil
}

func (s *Scorer) keepMissed() bool { return s.KeepMissed == nil || s.KeepMissed() }

// topKKeyed is casefile.TopKIdentities(dst, ids, k) for ids keyed by
// kbfile.KB.Keys, with the keys of the ids kept appended to dstKeys: two ids
// of cards are equal exactly when their keys are, an id of a card never
// equals one that is not (key 0), and only two of those are compared as
// strings.
func topKKeyed(dst []string, dstKeys []uint64, ids []string, keys []uint64, k int) ([]string, []uint64) {
	start, startKeys := len(dst), len(dstKeys)
	for i, key := range keys[:len(ids)] {
		if len(dst)-start >= k {
			break
		}
		if key != 0 { // a card: its key alone tells it apart
			if slices.Contains(dstKeys[startKeys:], key) {
				continue
			}
		} else if id := ids[i]; id == "" || hasKeyed(dst[start:], dstKeys[startKeys:], id, 0) {
			continue
		}
		dst = append(dst, ids[i])
		dstKeys = append(dstKeys, key)
	}
	return dst, dstKeys
}

// appendDedupKeyed appends to dst (and their keys to dstKeys) the non-empty
// ids of ids (keyed by kbfile.KB.Keys) that neither dst nor an earlier one of
// ids holds: metrics.AppendDedupGold keyed, and, on a dst that holds the
// gold, the second pass of metrics.AppendRelevant.
func appendDedupKeyed(dst []string, dstKeys []uint64, ids []string, keys []uint64) ([]string, []uint64) {
	for i, id := range ids {
		if id == "" || hasKeyed(dst, dstKeys, id, keys[i]) {
			continue
		}
		dst = append(dst, id)
		dstKeys = append(dstKeys, keys[i])
	}
	return dst, dstKeys
}

// hasKeyed reports whether the ids kept (with their keys) hold id (key key).
func hasKeyed(kept []string, keys []uint64, id string, key uint64) bool {
	for j, kj := range keys {
		if kj == key && (key != 0 || kept[j] == id) {
			return true
		}
	}
	return false
}

// checkKeyed is checkIDs for ids keyed by kbfile.KB.Keys (0: not a card).
func (r *CaseResult) checkKeyed(c *casefile.Case, ids []string, keys []uint64, empty, unknown ProblemKind) {
	for i, g := range ids {
		switch {
		case g == "":
			r.Problems = append(r.Problems, Problem{File: c.File, Line: c.Line, CaseID: c.ID, GoldID: g, Kind: empty})
		case keys[i] == 0:
			if !slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.GoldID == g && p.Kind == unknown }) {
				r.Problems = append(r.Problems, Problem{File: c.File, Line: c.Line, CaseID: c.ID, GoldID: g, Kind: unknown})
			}
		}
	}
}

// checkIDs appends the integrity problems of the case's ids (empty, or not a
// card of kb: each unknown id once per case) as the given kinds.
func (r *CaseResult) checkIDs(has func(string) bool, c *casefile.Case, ids []string, empty, unknown ProblemKind) {
	for _, g := range ids {
		switch {
		case g == "":
			r.Problems = append(r.Problems, Problem{File: c.File, Line: c.Line, CaseID: c.ID, GoldID: g, Kind: empty})
		case !has(g):
			if !slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.GoldID == g && p.Kind == unknown }) {
				r.Problems = append(r.Problems, Problem{File: c.File, Line: c.Line, CaseID: c.ID, GoldID: g, Kind: unknown})
			}
		}
	}
}

// scratch is the per-case working memory of ScoreInto, pooled: the measures are
// called through the registry (function values), so their input would otherwise
// escape to the heap on every case. It is not cleared between cases: the
// strings it still holds keep at most a few blocks alive until the pool drops
// it at a collection.
//
// Its first and last 128 bytes are padding: two workers' scratches allocated
// side by side would share a cache line at their ends (casefile's alone).
type scratch struct {
	_            [128]byte
	ranked       [32]string
	keys         [32]uint64
	gold         [8]string
	goldKeys     [8]uint64
	topk         [16]string
	topkKeys     [16]uint64
	relevant     [16]string
	relevantKeys [16]uint64
	in           metrics.CaseInput
	// The last locales canonicalized (copies: a tag may view a block the
	// reader reuses) and their canonical forms: a run has a handful.
	locales [4]struct{ tag, canonical string }
	next    int
	// The last types seen (copies): the result's type is one of them, not a
	// view of the case's line, so the aggregation (Accumulator.cell, on
	// another core) does not read the line.
	types    [4]string
	nextType int
	_        [128]byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// canonicalLocale is CanonicalLocale(tag), remembered for the next cases.
func (sc *scratch) canonicalLocale(tag string) string {
	for i := range sc.locales {
		if l := &sc.locales[i]; l.canonical != "" && l.tag == tag {
			return l.canonical
		}
	}
	l := &sc.locales[sc.next%len(sc.locales)]
	sc.next++
	l.tag = strings.Clone(tag)
	l.canonical = CanonicalLocale(l.tag)
	return l.canonical
}

// internType is typ, as a copy the scratch keeps for the next cases.
func (sc *scratch) internType(typ string) string {
	for _, t := range sc.types {
		if t == typ && t != "" {
			return t
		}
	}
	t := strings.Clone(typ)
	sc.types[sc.nextType%len(sc.types)] = t
	sc.nextType++
	return t
}

// CanonicalLocale puts a BCP 47 tag in its canonical case, so "pt-br" and
// "pt-BR" are one group: the language and other subtags lower case, a 4-letter
// script in title case, a 2-letter region upper case ("zh-hant-tw" -> "zh-Hant-TW");
// "_" separators become "-"; surrounding space is trimmed; empty is "und".
func CanonicalLocale(tag string) string {
	if isCanonicalLocale(tag) {
		return tag // the common case: no allocation
	}
	tag = strings.TrimSpace(tag)
	if tag == "" {
		return UndeterminedLocale
	}
	parts := strings.Split(strings.ReplaceAll(tag, "_", "-"), "-")
	for i, p := range parts {
		switch {
		case i == 0:
			parts[i] = asciiCase(p, false, false)
		case len(p) == 1: // an extension or private-use singleton: the rest stays lower case
			for j := i; j < len(parts); j++ {
				parts[j] = asciiCase(parts[j], false, false)
			}
			return strings.Join(parts, "-")
		case len(p) == 2:
			parts[i] = asciiCase(p, true, true)
		case len(p) == 4:
			parts[i] = asciiCase(p, true, false)
		default:
			parts[i] = asciiCase(p, false, false)
		}
	}
	return strings.Join(parts, "-")
}

// asciiCase maps ASCII letters only (other bytes are kept, so lengths do not
// change): the first letter upper when first is set, the others upper when rest is set.
func asciiCase(s string, first, rest bool) string {
	b := []byte(s)
	for i, c := range b {
		up := rest
		if i == 0 {
			up = first
		}
		switch {
		case up && c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !up && c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// isCanonicalLocale reports whether CanonicalLocale would return tag unchanged.
func isCanonicalLocale(tag string) bool {
	if tag == "" {
		return false
	}
	start, idx := 0, 0
	for i := 0; i <= len(tag); i++ {
		if i < len(tag) && tag[i] != '-' {
			continue
		}
		sub := tag[start:i]
		if sub == "" {
			return false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j]
			upper := c >= 'A' && c <= 'Z'
			lower := c >= 'a' && c <= 'z'
			digit := c >= '0' && c <= '9'
			if !upper && !lower && !digit {
				return false
			}
			wantUpper := idx > 0 && (len(sub) == 2 || (len(sub) == 4 && j == 0))
			if upper != wantUpper && !digit {
				return false
			}
		}
		if idx > 0 && len(sub) == 1 {
			return false // singletons: leave to the slow path
		}
		start, idx = i+1, idx+1
	}
	return true
}

// keepForReport copies what the missed-cases list shows, bounded.
func (r *CaseResult) keepForReport(c *casefile.Case, topk []string) {
	r.Query = truncateRunes(c.Query, maxQueryRunes)
	r.Gold = carveStrings(c.Gold[:min(len(c.Gold), maxKeptIDs)])
	if topk != nil {
		r.TopK = carveStrings(topk[:min(len(topk), maxKeptIDs)])
	}
}

// strChunk is a block that kept id lists are carved from (a fifth of the cases
// of a run may be missed: one allocation per few hundred of them, not two per
// case). A list is never written after it is handed out.
type strChunk struct{ buf []string }

const strChunkSize = 512

var strChunks = sync.Pool{New: func() any { return &strChunk{} }}

// carveStrings is slices.Clone(xs) (an empty xs gives an empty, non-nil
// result, as Clone does) carved from a pooled chunk.
func carveStrings(xs []string) []string {
	if len(xs) == 0 {
		return xs[:0:0]
	}
	ch := strChunks.Get().(*strChunk)
	if cap(ch.buf)-len(ch.buf) < len(xs) {
		ch.buf = make([]string, 0, max(strChunkSize, len(xs)))
	}
	start := len(ch.buf)
	ch.buf = append(ch.buf, xs...)
	out := ch.buf[start:len(ch.buf):len(ch.buf)]
	strChunks.Put(ch)
	return out
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}
