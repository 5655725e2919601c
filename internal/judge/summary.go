package judge

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Price is the cost of 1,000 tokens, prompt and completion.
type Price struct {
	Prompt, Completion float64
}

// Unjudged is one (pair, repeat) without a valid grade.
type Unjudged struct {
	QueryID string
	DocID   string
	Repeat  int
	Cause   string
	Detail  string
}

// Agreement is the judge's self-agreement between two repeats, over the pairs
// both judged.
type Agreement struct {
	Repeats [2]int
	N       int
	// Agreement is the share of exact agreement; Kappa Cohen's kappa;
	// WeightedKappa the quadratic-weighted kappa with its 95% CI, calibrate's
	// (metrics.KappaCI95Context: BCa over the resampled grade counts, widened
	// to the Wilson interval of the disagreement where the bootstrap would be
	// a point). null when undefined (n = 0, or both repeats used one grade).
	Agreement     *float64
	Kappa         *float64
	WeightedKappa *float64
	Weighting     string
	CI95          *[2]float64
	// CIMethod is how CI95 was computed ("" without one); Unreliable that its
	// method covers less than 0.95 at this n, or on margins this sparse, in
	// simulation (metrics.Interval.Unreliable).
	CIMethod   string
	Unreliable bool
	// Differing counts the pairs whose two grades differ.
	Differing int
}

// Summary is what the report shows of a Result.
type Summary struct {
	Queries                 int // the pairs' distinct queries
	Pairs, Judged, Unjudged int
	Judgments               int
	UnjudgedByCause         map[string]int
	UnjudgedList            []Unjudged
	Distribution            [MaxGrade + 1]int // pairs per label
	SelfAgreement           []Agreement
	EstimatedCost           *float64
	Flickering              int // pairs whose valid grades are not all equal
}

// AgreementResamples is the number of bootstrap resamples of the self-agreement CI.
const AgreementResamples = 2000

// SummarizeContext counts the labels, the unjudged answers and the
// self-agreement, and prices the tokens when price is not nil. It ends with
// ctx.Err() soon after ctx ends (the self-agreement's bootstrap resamples the
// grade counts: AgreementResamples multinomial draws of at most 16 cells for
// each two repeats, whatever the number of pairs).
func SummarizeContext(ctx context.Context, res *Result, price *Price) (*Summary, error) {
	s := &Summary{Pairs: len(res.Pairs), Judgments: len(res.Pairs) * res.Repeat, UnjudgedByCause: map[string]int{CauseUnparseable: 0, CauseOutOfRange: 0, CauseBudget: 0}}
	queries := map[string]bool{}
	for i, p := range res.Pairs {
		queries[p.QueryID] = true
		if rel, ok := res.Relevance(i); ok {
			s.Judged++
			s.Distribution[rel]++
		} else {
			s.Unjudged++
		}
		first, differ := -1, false
		for rep, j := range res.Grades[i] {
			if !j.Valid {
				s.UnjudgedByCause[j.Cause]++
				s.UnjudgedList = append(s.UnjudgedList, Unjudged{QueryID: p.QueryID, DocID: p.DocID, Repeat: rep, Cause: j.Cause, Detail: j.Detail})
				continue
			}
			if first < 0 {
				first = j.Grade
			} else if j.Grade != first {
				differ = true
			}
		}
		if differ {
			s.Flickering++
		}
	}
	s.Queries = len(queries)
	w := metrics.KappaWeights(MaxGrade+1, metrics.KappaQuadratic)
	for a := 0; a < res.Repeat; a++ {
		for b := a + 1; b < res.Repeat; b++ {
			var x, y []int
			ag := Agreement{Repeats: [2]int{a, b}, Weighting: metrics.KappaQuadratic}
			for i := range res.Pairs {
				ja, jb := res.Grades[i][a], res.Grades[i][b]
				if ja.Valid && jb.Valid {
					x, y = append(x, ja.Grade), append(y, jb.Grade)
					if ja.Grade != jb.Grade {
						ag.Differing++
					}
				}
			}
			ag.N = len(x)
			m := metrics.ConfusionMatrix(x, y, MaxGrade+1)
			ag.Agreement = finite(metrics.Agreement(m))
			ag.Kappa = finite(metrics.CohenKappa(m))
			ag.WeightedKappa = finite(metrics.WeightedKappa(m, w))
			if ag.WeightedKappa != nil {
				// calibrate's interval: the percentile bootstrap of the pairs
				// gave [1, 1] when every pair agreed (a deterministic judge).
				iv, err := metrics.KappaCI95Context(ctx, m, w, AgreementResamples, metrics.DefaultSeed, metrics.KappaCIMethod)
				if err != nil {
					return nil, err
				}
				if ci := iv.CI(); !math.IsNaN(ci[0]) && !math.IsNaN(ci[1]) {
					ag.CI95, ag.CIMethod, ag.Unreliable = &ci, iv.Method, iv.Unreliable
				}
			}
			s.SelfAgreement = append(s.SelfAgreement, ag)
		}
	}
	if price != nil {
		c := float64(res.PromptTokens)/1000*price.Prompt + float64(res.CompletionTokens)/1000*price.Completion
		s.EstimatedCost = &c
	}
	return s, nil
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ParsePrice reads a price per 1,000 tokens (--price-per-1k): "P" (prompt and
// completion) or "P,C", each finite and at least 0; "" is none (nil).
func ParsePrice(v string) (*Price, error) {
	if v == "" {
		return nil, nil
	}
	a, b, two := strings.Cut(v, ",")
	p, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
	c := p
	if err == nil && two {
		c, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
	}
	if err != nil || finite(p) == nil || finite(c) == nil || p < 0 || c < 0 {
		return nil, fmt.Errorf("want PRICE or PROMPT_PRICE,COMPLETION_PRICE (per 1,000 tokens, ≥ 0), got %q", v)
	}
	return &Price{Prompt: p, Completion: c}, nil
}
