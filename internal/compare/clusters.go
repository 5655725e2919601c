package compare

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Queries in families (issue 34 item 2): compare --clusters FILE gives each
// query a cluster (the card or intent its paraphrases were written from), and
// the intervals and paired tests are then computed over clusters
// (metrics.ClusterCI95, ClusterPairedCI95, ClusterPairedP).

// clusterMeanCI95 is the 95% interval of a strategy's mean over queries in the
// clusters sub: metrics.ClusterCI95, widened to the interval of the same mean
// over the queries as if independent where that reaches further on a side
// (metrics.MethodClusterHull, as check's group means): cluster-t alone is
// symmetric and covered 0.936–0.939 on hit means near 0.9 over 38 families
// (TestClusterTallyCoverage), where the skewed Wilson interval over the queries
// holds; families never make an interval narrower. The queries' interval is
// metrics.ColumnCI95 without resamples (Wilson-cc for 0/1 values, hall-t
// below 30 queries, else the Cornish-Fisher interval).
func clusterMeanCI95(xs []float64, sub []int, nc int, lo, hi float64) metrics.Interval {
	c := metrics.ClusterInterval{Interval: metrics.ClusterCI95(xs, sub, nc, lo, hi)}
	return c.Widen(metrics.ColumnCI95(xs, nil, lo, hi)).Interval
}

// MaxClustersLine is the longest line of a clusters file.
const MaxClustersLine = 1 << 20

// ReadClusters reads a query-to-cluster file: one `QUERY_ID CLUSTER` per line
// (two fields separated by white space, as in a qrels file); blank lines and
// lines starting with # are skipped. A query given twice, a line with another
// number of fields or longer than MaxClustersLine is an error naming the file
// and line. A query the file does not list is a cluster of its own.
func ReadClusters(ctx context.Context, r io.Reader, file string) (map[string]string, error) {
	sc := bufio.NewScanner(input.Reader(ctx, r))
	sc.Buffer(make([]byte, 0, 64<<10), MaxClustersLine)
	out := map[string]string{}
	first := map[string]int{} // the line of each query
	line := 0
	for sc.Scan() {
		line++
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		b := sc.Bytes()
		if line == 1 {
			b = input.TrimBOM(b) // before the trim: " # x" after a BOM is a comment
		}
		s := strings.TrimSpace(string(b))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if s[0] == '{' { // a JSON line: a Parquet file's row, or JSONL
			return nil, input.Errorf(file, line, "a JSON object, but a clusters line is `QUERY_ID CLUSTER` (for a table of queries and clusters, give it to --queries as cases with `id` and `cluster`)")
		}
		f := strings.Fields(s)
		if len(f) != 2 {
			return nil, input.Errorf(file, line, "a clusters line is `QUERY_ID CLUSTER` (2 fields), got %d", len(f))
		}
		if c, ok := out[f[0]]; ok {
			return nil, input.Errorf(file, line, "query %q given twice (first on line %d, in cluster %q)", f[0], first[f[0]], c)
		}
		out[f[0]], first[f[0]] = f[1], line
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, input.Errorf(file, line+1, "line longer than %d MiB", MaxClustersLine>>20)
		}
		return nil, err
	}
	return out, nil
}

// Clusters says how the evaluated queries fall into clusters (Options.Clusters).
type Clusters struct {
	File     string // the clusters file (Files.Clusters), else the queries file (Files.Queries)
	Queries  int    // evaluated queries
	Clusters int    // clusters among them (a query the file does not list is one)
	Listed   int    // evaluated queries given a cluster (by the clusters file or their case)
}

// clustering numbers the clusters of the evaluated queries (r.QueryIDs): a
// query's cluster is the clusters file's, else its case's in the queries
// (clusterOf); file names the clusters file, else the queries file.
func (r *Result) clustering(of map[string]string, queries Queries, file string) {
	keys := make([]string, len(r.QueryIDs))
	listed := 0
	for i, q := range r.QueryIDs {
		if c, ok := clusterOf(of, queries, q); ok {
			keys[i], listed = "\x00"+c, listed+1 // never "" (a cluster of its own)
		}
	}
	r.clusterIdx, r.numClusters = metrics.ClusterIndex(keys)
	r.Clusters = &Clusters{File: file, Queries: len(keys), Clusters: r.numClusters, Listed: listed}
}

// clustered reports whether the statistics are computed over clusters.
func (r *Result) clustered() bool { return r.clusterIdx != nil }

// QueryCluster is the cluster of evaluated query i (r.QueryIDs[i]) as the
// statistics count it when the queries come in clusters: its name and true,
// or "" and false for a query that is a cluster of its own; in is false
// when the queries do not come in clusters.
func (r *Result) QueryCluster(i int) (name string, listed, in bool) {
	if !r.clustered() {
		return "", false, false
	}
	name, listed = clusterOf(r.Options.Clusters, r.Queries, r.QueryIDs[i])
	return name, listed, true
}

// rowClusters is the clustering of the rows (evaluated query indexes).
func (r *Result) rowClusters(rows []int) ([]int, int) {
	return metrics.Subclusters(r.clusterIdx, rows)
}
