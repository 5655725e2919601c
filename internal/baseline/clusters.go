package baseline

import (
	"math"
	"slices"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Cases in families (issue 34 item 2): a case's `cluster` key (generate sets
// the card its queries were written from) says that the cases of one cluster
// are not independent. When paired cases carry one, each group's paired
// intervals and tests are computed over the clusters: a case without a
// cluster is a cluster of its own.

// Names of the cluster-level paired tests (Stat.Test).
const (
	TestClusterSignFlipExact = "cluster_sign_flip_exact"
	TestClusterSignFlipMC    = "cluster_sign_flip_randomization"
	TestClusterSaddlepoint   = "cluster_sign_flip_saddlepoint"
)

// clusterAcc is one cluster's sums of differences and sizes by measure.
type clusterAcc struct {
	sum [metrics.NumCase]float64
	n   [metrics.NumCase]int64
}

// addClustered records the difference d of measure m of a case of cluster key.
func (ce *cell) addClustered(key string, m int, d float64) {
	if ce.clus == nil {
		ce.clus = map[string]*clusterAcc{}
		for i := range ce.clusDiff {
			ce.clusDiff[i] = metrics.NewHistogram()
		}
	}
	a := ce.clus[key]
	if a == nil {
		a = &clusterAcc{}
		ce.clus[strings.Clone(key)] = a
	}
	a.sum[m] += d
	a.n[m]++
	ce.clusDiff[m].Add(d)
}

// clusterSums returns, for measure m, the sums and sizes of the clusters of
// the cases of clus (by key, sorted) followed by each case without a cluster
// (all minus the clustered differences, by value ascending).
func clusterSums(m int, clus map[string]*clusterAcc, all, clustered *metrics.Histogram) (sums []float64, sizes []int64) {
	keys := make([]string, 0, len(clus))
	for k, a := range clus {
		if a.n[m] > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		sums, sizes = append(sums, clus[k].sum[m]), append(sizes, clus[k].n[m])
	}
	vals, cnt := all.Values()
	cv, cc := clustered.Values()
	j := 0
	for i, v := range vals {
		c := cnt[i]
		for j < len(cv) && cv[j] < v {
			j++
		}
		if j < len(cv) && cv[j] == v {
			c -= cc[j]
		}
		for range c {
			sums, sizes = append(sums, v), append(sizes, 1)
		}
	}
	return sums, sizes
}

// clusterStat recomputes s (pairedStat over cases) over the clusters whose
// sums and sizes of differences are given (h: every case's difference): the
// interval metrics.ClusterSumsPairedCI95 (the rule of three over the
// clusters when every difference is equal), the sign-flip test of the
// clusters' sums, and the MDD (z₀.₉₇₅ + z₀.₈) times the cluster-robust
// standard error.
func clusterStat(s *Stat, info metrics.Info, h *metrics.Histogram, sums []float64, sizes []int64, resamples int, seed uint64) {
	G := int64(len(sums))
	s.Clusters = G
	span := 1.0
	if info.Scale == metrics.ScaleUnbounded {
		span = math.Inf(1)
	}
	vals, _ := h.Values()
	var iv metrics.Interval
	if len(vals) == 1 && !math.IsInf(span, 0) {
		iv = metrics.RuleOfThreeCI95(vals[0], G, -span, span)
		iv.N = s.N
	} else {
		iv = metrics.ClusterSumsPairedCI95(sums, sizes, span)
	}
	s.CI95, s.CI95Method, s.Unreliable = iv.CI(), iv.Method, iv.Unreliable
	if s.Test != TestNone {
		p, method := metrics.ClusterSumsP(sums, resamples, seed)
		switch method {
		case metrics.PMethodNoDifference: // the clusters' differences cancel
			s.P, s.Test = 1, TestClusterSignFlipExact
		case metrics.PMethodClusterSignFlipExact:
			s.P, s.Test = p, TestClusterSignFlipExact
		case metrics.PMethodClusterSaddlepoint:
			s.P, s.Test = p, TestClusterSaddlepoint
		default:
			s.P, s.Test = p, TestClusterSignFlipMC
		}
	}
	// The MDD over the clusters, with no test too (a case-level McNemar
	// MDD claimed "n = 40 paired cases can only detect drops of 0.185" of 40
	// cases in 4 clusters, where no test of 4 clusters can reject).
	_, se := metrics.ClusterSE(sums, sizes)
	s.MDD, s.NoSpread = signFlipMDD(se*math.Sqrt(float64(G)), G, span)
	s.Rejects = s.P < Alpha
	s.Change = ""
	if s.Rejects && s.Delta != 0 {
		if (s.Delta < 0) == info.HigherIsBetter {
			s.Change = "worse"
		} else {
			s.Change = "better"
		}
	}
	s.Note = ""
	if excludes := s.CI95[0] > 0 || s.CI95[1] < 0; excludes != s.Rejects {
		s.Note = NoteMethods
	}
}
