package baseline

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The mean rank-biased overlap of a set of cases and its 95% interval: one
// method for every mean RBO check reports (the churn's groups, churn.go; the
// overlap lines' paired cases and cases without gold, overlap.go).
//
// Per-case RBO is bounded and sits at 1 wherever nothing moved, often for
// most cases: 1 − RBO has the shape of a paired difference that is mostly 0,
// so the interval is metrics.Histogram.DifferenceCI95 of 1 − RBO over [0, 1]
// (hall-t-betting below 50 cases, hall-t from there, the bounded interval
// when no case moved), mapped back to the RBO: [1 − hi, 1 − lo]. When cases
// carry a `cluster` key (cases in families, issue 34 item 2) it is computed
// over the clusters (metrics.ClusterTally: cluster-t, a case without a key a
// cluster of its own), widened to the interval over the cases where that
// reaches further (cluster-t-hull).

// rboTally accumulates the RBO of a set of cases, in any order.
type rboTally struct {
	sum  float64               // Σ RBO
	dist *metrics.Histogram    // 1 − RBO of every case
	clus *metrics.ClusterTally // 1 − RBO of the cases with a cluster key (nil until one comes)
}

func newRBOTally() rboTally {
	return rboTally{dist: metrics.NewHistogram()}
}

// add counts a case of RBO rbo and cluster key cluster ("": none).
func (t *rboTally) add(rbo float64, cluster string) {
	t.sum += rbo
	t.dist.Add(1 - rbo)
	if cluster != "" {
		if t.clus == nil {
			t.clus = metrics.NewClusterTally()
		}
		t.clus.Add(cluster, 1-rbo)
	}
}

// merge adds o's cases: a cluster both hold is one cluster.
func (t *rboTally) merge(o *rboTally) {
	t.sum += o.sum
	t.dist.Merge(o.dist)
	if o.clus != nil {
		if t.clus == nil {
			t.clus = metrics.NewClusterTally()
		}
		t.clus.Merge(o.clus)
	}
}

// n is the number of cases counted.
func (t *rboTally) n() int64 { return t.dist.N() }

// estimate is the mean RBO with its 95% interval, and the clusters the cases
// fall into when some carry a cluster key (0 when none does). No case: every
// figure NaN, no method.
func (t *rboTally) estimate() (Estimate, int64) {
	n := t.n()
	if n == 0 {
		return nanEstimate(), 0
	}
	iv := t.dist.DifferenceCI95(0, 1)
	var clusters int64
	if t.clus != nil {
		c := t.clus.CI95(t.dist, 0, 1).Widen(iv)
		iv, clusters = c.Interval, c.Clusters
	}
	iv.Lo, iv.Hi = 1-iv.Hi, 1-iv.Lo
	return Estimate{Mean: t.sum / float64(n), CI95: iv}, clusters
}

// nanEstimate is the estimate of no case: NaN, its interval NaN, no method.
func nanEstimate() Estimate {
	return Estimate{Mean: math.NaN(), CI95: metrics.Interval{Lo: math.NaN(), Hi: math.NaN()}}
}
