package cli

// check's comparison with a baseline run (--baseline, --write-baseline, the
// regression gates): flags, loading, the per-case hooks of scoreCases, the
// baseline file's writing and the step outputs.

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ghartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// baselineAuto is the --baseline value that looks the baseline up in GitHub Actions.
const baselineAuto = "auto"

// baselineFlags are check's comparison flags.
type baselineFlags struct {
	path, write string
	artifact    string // --baseline-artifact
	maxDrop     map[string]baseline.Tolerance
	test        string
	rankDrop    int
	raw         map[string]*string
}

// baselineInputs are the Action inputs of baselineFlags.
func baselineInputs(in actionInputs) actionInputs {
	for _, k := range []string{"baseline", "baseline-artifact", "write-baseline", "max-drop-hit", "max-drop-recall", "max-drop-ndcg", "regression-test", "rank-drop"} {
		in[k] = ""
	}
	return in
}

func (b *baselineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.path, "baseline", "", "compare with the baseline run in `FILE` (a --write-baseline file or a --cases-out file), paired by case id; auto finds it in GitHub Actions")
	fs.StringVar(&b.artifact, "baseline-artifact", "", "--baseline auto: the artifact `NAME` (default retrieval-gate-baseline-<comment-key>)")
	fs.StringVar(&b.write, "write-baseline", "", "write this run as a baseline file (gzip JSONL, schema retrieval-gate/baseline@1) to `FILE`")
	b.raw = map[string]*string{}
	for _, gm := range baseline.GateMeasures {
		flagName := maxDropFlag(gm.Name)
		b.raw[gm.Key] = fs.String(flagName, "", "regression gate: the drop of the overall mean "+metrics.CaseMeasures[metrics.CaseIndex(gm.Key)].Label+"@k vs the baseline that is tolerated, in [0,1]; none or empty is off")
	}
	fs.StringVar(&b.test, "regression-test", baseline.TestSignificant, "significant: a regression gate fails only when the drop exceeds its tolerance and the paired test rejects at 0.05; any: when the drop exceeds it")
	fs.IntVar(&b.rankDrop, "rank-drop", baseline.DefaultRankDrop, "list a case whose first gold card fell by at least `N` ranks")
}

// maxDropFlag is the flag of a regression gate: max_drop_hit is --max-drop-hit.
func maxDropFlag(gateName string) string {
	return "max-drop-" + strings.TrimPrefix(gateName, "max_drop_")
}

func (b *baselineFlags) validate(src *sources, commentKey string) error {
	if b.artifact == "" {
		b.artifact = ghartifact.DefaultName(commentKey)
	}
	if err := ghartifact.ValidName(b.artifact); err != nil {
		return src.refuseErr("check", "baseline-artifact", err)
	}
	b.maxDrop = map[string]baseline.Tolerance{}
	for _, gm := range baseline.GateMeasures { // in their order: the first bad one is named
		t, err := gate.ParseFloor(*b.raw[gm.Key])
		if err != nil {
			return src.refuseErr("check", maxDropFlag(gm.Name), err)
		}
		b.maxDrop[gm.Key] = t
	}
	if b.test != baseline.TestSignificant && b.test != baseline.TestAny {
		return src.refuse("check", "regression-test", "must be significant or any")
	}
	if b.rankDrop < 1 {
		return src.refuse("check", "rank-drop", "must be at least 1")
	}
	return nil
}

// baselineFile is --baseline when it names a file (not auto).
func (b *baselineFlags) baselineFile() string {
	if b.path == baselineAuto {
		return ""
	}
	return b.path
}

// baselineRun is the comparison state of one check run.
type baselineRun struct {
	opts   baseline.Options
	base   *baseline.Baseline
	cmp    *baseline.Comparer
	unav   string            // why there is no baseline (auto)
	source map[string]string // provenance of a fetched artifact
	write  bool              // --write-baseline: scoreCases renders each case's baseline line
	body   *os.File
	bw     *bufio.Writer
	gz     *gzip.Writer
	aw     *asyncWriter
}

// openBaseline loads --baseline (nil when neither --baseline nor --write-baseline).
func openBaseline(ctx context.Context, env *Env, o *checkOptions, kb *kbfile.KB) (*baselineRun, error) {
	b := &o.baseline
	if b.path == "" && b.write == "" {
		return nil, nil
	}
	run := &baselineRun{opts: baseline.Options{
		K: o.k, KBFingerprint: baseline.KBFingerprint(kb.Cards), RankDrop: b.rankDrop,
		MaxDrop: b.maxDrop, Test: b.test, Now: time.Now(),
	}}
	path := b.path
	var found *ghartifact.Found
	if path == baselineAuto {
		path = ""
		if env.Getenv("GITHUB_ACTIONS") != "true" {
			run.unav = "--baseline auto looks the baseline up in GitHub Actions; this is not an Actions run"
		} else {
			g := env.Getenv
			api := strings.TrimSpace(g("GITHUB_API_URL"))
			if api == "" {
				api = github.DefaultAPIURL
			}
			var u *ghartifact.Unavailable
			found, u = ghartifact.Fetch(ctx, ghartifact.Deps{APIURL: api, Token: publish.Token(g),
				Repo: g("GITHUB_REPOSITORY"), EventPath: g("GITHUB_EVENT_PATH")}, b.artifact)
			if u != nil {
				run.unav = fmt.Sprintf("%s (%s)", u.Message, u.Reason)
			} else {
				defer func() {
					// The downloaded file is a temporary: a failure to remove it is said, not fatal.
					if err := found.Cleanup(); err != nil {
						fmt.Fprintf(env.Stderr, "retrieval-gate: warning: baseline artifact: %s\n", format.SanitizeText(err.Error()))
					}
				}()
				path = found.Path
			}
		}
	}
	if path != "" {
		f, err := input.Open(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("failed to read the baseline: %w", err)
		}
		defer f.Close()
		name := path
		if found != nil {
			name = "artifact " + found.Name
		}
		if run.base, err = baseline.Load(ctx, f, name, ""); err != nil {
			return nil, err
		}
		run.cmp = baseline.NewComparer(run.base, run.opts)
		if found != nil {
			run.source = map[string]string{
				"artifact_id": strconv.FormatInt(found.ArtifactID, 10), "run_id": strconv.FormatInt(found.RunID, 10),
				"head_sha": found.HeadSHA, "artifact_created_at": found.CreatedAt.UTC().Format(time.RFC3339),
			}
		}
	}
	if b.write != "" {
		body, err := os.CreateTemp("", "retrieval-gate-baseline-body-*")
		if err != nil {
			run.close()
			return nil, fmt.Errorf("--write-baseline: %w", err)
		}
		os.Remove(body.Name())
		run.write, run.body = true, body
		run.bw = bufio.NewWriterSize(body, 1<<20)
		run.gz, _ = gzip.NewWriterLevel(run.bw, gzip.BestSpeed)
		run.aw = newAsyncWriter(run.gz)
	}
	return run, nil
}

func (r *baselineRun) close() {
	if r == nil {
		return
	}
	r.base.Close()
	if r.body != nil {
		r.body.Close()
	}
}

// caseItem is what a worker of scoreCases hands to emit.
type caseItem struct {
	r    gate.CaseResult
	line baseline.CaseLine // id, query, gold (kept only when listed or written)
	cur  baseline.Current
	bl   []byte // the --write-baseline line
}

// prepare fills the comparison fields of it from the case (on a worker). Only a
// case that may be listed keeps its query, gold and top k (copied: cs is reused).
func (r *baselineRun) prepare(cs *casefile.Case, it *caseItem, k int) {
	res := &it.r
	it.cur = baseline.Current{IDHash: baseline.IDHash(cs.ID), GoldHash: baseline.GoldHash(cs.Gold)}
	var rankedBuf, dedupBuf [32]string
	if res.Scored && !res.Precomputed {
		ranked := rankedBuf[:0]
		for i := range cs.Retrieved {
			ranked = append(ranked, cs.Retrieved[i].Identity())
		}
		dedup := metrics.TopKIdentities(dedupBuf[:0], ranked, len(ranked))
		it.cur.Ranked, it.cur.Rank, it.cur.Top = true, metrics.FirstGoldRank(dedup, cs.Gold), dedup[:min(k, len(dedup))]
	}
	keep := r.cmp != nil && r.cmp.NeedsDetail(res, &it.cur)
	if keep || r.write {
		it.line = baseline.CaseLine{ID: cs.ID, Line: cs.Line, Locale: cs.Locale, Type: res.Type, Query: cs.Query,
			Gold: cs.Gold, Scores: res.Scores, Has: res.Has, Ranked: it.cur.Ranked, Rank: it.cur.Rank, Top: it.cur.Top}
	}
	if r.write {
		it.bl = appendBaselineLine(&it.line)
	}
	if keep {
		it.line.Gold = append([]string(nil), it.line.Gold...)
		it.cur.Top = append([]string(nil), it.cur.Top...)
		it.line.Top = it.cur.Top
	} else {
		it.line, it.cur.Top = baseline.CaseLine{}, nil
	}
}

// add joins the case of it (emit, file order, after the accumulator accepted it).
func (r *baselineRun) add(it *caseItem) error {
	if r.cmp != nil {
		r.cmp.Add(&it.r, &it.line, &it.cur)
	}
	if r.write {
		_, err := r.aw.Write(it.bl)
		return err
	}
	return nil
}

// appendBaselineLine renders one baseline line into a pooled chunk.
func appendBaselineLine(c *baseline.CaseLine) []byte {
	ch := lineChunks.Get().(*lineChunk)
	if cap(ch.buf)-len(ch.buf) < 4<<10 {
		ch.buf = make([]byte, 0, lineChunkSize)
	}
	start := len(ch.buf)
	ch.buf = baseline.AppendCaseLine(ch.buf, c)
	line := ch.buf[start:len(ch.buf):len(ch.buf)]
	lineChunks.Put(ch)
	return line
}

// result is the comparison (nil without --baseline).
func (r *baselineRun) result() (*baseline.Comparison, error) {
	switch {
	case r == nil || r.opts.K == 0:
		return nil, nil
	case r.unav != "":
		return baseline.Unavailable(r.unav, r.opts), nil
	case r.cmp == nil:
		return nil, nil
	}
	c, err := r.cmp.Result()
	if c != nil {
		c.Source = r.source
		if c.Commit == "" && r.source != nil {
			c.Commit = r.source["head_sha"]
		}
	}
	return c, err
}

// finishBody flushes the compressed case lines of --write-baseline.
func (r *baselineRun) finishBody() error {
	if err := r.aw.Close(); err != nil {
		return err
	}
	if err := r.gz.Close(); err != nil {
		return err
	}
	return r.bw.Flush()
}

// writeBaselineFile writes --write-baseline into w: the header with this run's
// document, then the case lines compressed while scoring.
func writeBaselineFile(env *Env, o *checkOptions, r *baselineRun, res *gate.Result, kb *kbfile.KB, doc interface{ WriteJSON(io.Writer) error }, w io.Writer) error {
	var agg strings.Builder
	if err := doc.WriteJSON(&agg); err != nil {
		return err
	}
	h := &baseline.Header{
		Aggregates: []byte(strings.TrimSpace(agg.String())), Cases: res.Total, CasesFile: o.cases,
		Commit: headCommit(env), CreatedAt: createdAt(env).UTC().Format(time.RFC3339),
		K: o.k, KBCards: kb.Len(), KBFingerprint: r.opts.KBFingerprint,
	}
	if _, err := r.body.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return baseline.WriteFile(w, h, r.body)
}

// headCommit is the commit the run measured: $GITHUB_SHA, else `git rev-parse
// HEAD` in the working directory, else "".
func headCommit(env *Env) string {
	if s := strings.TrimSpace(env.Getenv("GITHUB_SHA")); s != "" {
		return s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// createdAt is $SOURCE_DATE_EPOCH when set (reproducible baseline files), else now.
func createdAt(env *Env) time.Time {
	if s := env.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0)
		}
	}
	return time.Now()
}

// baselineOutputs adds the step outputs of a comparison: regression (pass, fail,
// off) and the overall deltas (delta-hit, delta-recall, delta-ndcg; "" without one).
func baselineOutputs(out map[string]string, c *baseline.Comparison) {
	out["regression"] = string(outcome.Off)
	for _, gm := range baseline.GateMeasures {
		out["delta-"+strings.TrimPrefix(gm.Name, "max_drop_")] = ""
	}
	if c == nil {
		return
	}
	out["regression"] = string(c.Regression)
	for _, gm := range baseline.GateMeasures {
		for _, s := range c.Overall.Stats {
			if s.Key == gm.Key {
				out["delta-"+strings.TrimPrefix(gm.Name, "max_drop_")] = strconv.FormatFloat(s.Delta, 'g', -1, 64)
			}
		}
	}
}
