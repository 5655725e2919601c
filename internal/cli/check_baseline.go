package cli

// check's comparison with a baseline run (--baseline, --write-baseline, the
// regression gates): flags, loading, the per-case hooks of scoreCases, the
// baseline file's writing and the step outputs.

import (
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
	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
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

// baselineInput is what check's comparison flags open for check.Run: the
// baseline file or artifact, and the temporary body of --write-baseline.
type baselineInput struct {
	file  *os.File // --baseline's file
	found *ghartifact.Found
	body  *os.File // --write-baseline's case lines, compressed while scoring
	env   *Env
}

// openBaseline opens --baseline (fetching it with auto) and the temporary body
// of --write-baseline into in (nil when neither flag is given).
func openBaseline(ctx context.Context, env *Env, o *checkOptions, in *check.In) (*baselineInput, error) {
	b := &o.baseline
	if b.path == "" && b.write == "" {
		return nil, nil
	}
	bi := &baselineInput{env: env}
	path := b.path
	if path == baselineAuto {
		path = ""
		if env.Getenv("GITHUB_ACTIONS") != "true" {
			in.BaselineUnavailable = "--baseline auto looks the baseline up in GitHub Actions; this is not an Actions run"
		} else {
			g := env.Getenv
			api := strings.TrimSpace(g("GITHUB_API_URL"))
			if api == "" {
				api = github.DefaultAPIURL
			}
			found, u := ghartifact.Fetch(ctx, ghartifact.Deps{APIURL: api, Token: publish.Token(g),
				Repo: g("GITHUB_REPOSITORY"), EventPath: g("GITHUB_EVENT_PATH")}, b.artifact)
			if u != nil {
				in.BaselineUnavailable = fmt.Sprintf("%s (%s)", u.Message, u.Reason)
			} else {
				bi.found, path = found, found.Path
			}
		}
	}
	if path != "" {
		f, err := input.Open(ctx, path)
		if err != nil {
			bi.close()
			return nil, fmt.Errorf("failed to read the baseline: %w", err)
		}
		bi.file = f
		in.Baseline, in.BaselineName = f, path
		if found := bi.found; found != nil {
			in.BaselineName = "artifact " + found.Name
			in.BaselineSource = map[string]string{
				"artifact_id": strconv.FormatInt(found.ArtifactID, 10), "run_id": strconv.FormatInt(found.RunID, 10),
				"head_sha": found.HeadSHA, "artifact_created_at": found.CreatedAt.UTC().Format(time.RFC3339),
			}
		}
	}
	if b.write != "" {
		body, err := os.CreateTemp("", "retrieval-gate-baseline-body-*")
		if err != nil {
			bi.close()
			return nil, fmt.Errorf("--write-baseline: %w", err)
		}
		os.Remove(body.Name())
		bi.body = body
		in.BaselineBody = body
	}
	return bi, nil
}

// close closes the files and removes a downloaded artifact.
func (bi *baselineInput) close() {
	if bi == nil {
		return
	}
	if bi.file != nil {
		bi.file.Close()
	}
	if bi.body != nil {
		bi.body.Close()
	}
	if bi.found != nil {
		// The downloaded file is a temporary: a failure to remove it is said, not fatal.
		if err := bi.found.Cleanup(); err != nil {
			fmt.Fprintf(bi.env.Stderr, "retrieval-gate: warning: baseline artifact: %s\n", format.SanitizeText(err.Error()))
		}
		bi.found = nil
	}
}

// writeBaselineFile writes --write-baseline into w: the header with this run's
// document, then the case lines compressed while scoring.
func writeBaselineFile(env *Env, o *checkOptions, bi *baselineInput, run *check.Result, kb *kbfile.KB, doc interface{ WriteJSON(io.Writer) error }, w io.Writer) error {
	var agg strings.Builder
	if err := doc.WriteJSON(&agg); err != nil {
		return err
	}
	h := &baseline.Header{
		Aggregates: []byte(strings.TrimSpace(agg.String())), Cases: run.Gate.Total, CasesFile: o.cases,
		Commit: headCommit(env), CreatedAt: createdAt(env).UTC().Format(time.RFC3339),
		K: o.k, KBCards: kb.Len(), KBFingerprint: run.KBFingerprint,
	}
	if _, err := bi.body.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return baseline.WriteFile(w, h, bi.body)
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
