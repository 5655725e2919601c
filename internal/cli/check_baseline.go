package cli

// check's comparison with a baseline run (--baseline, --write-baseline, the
// regression gates): flags, loading, the per-case hooks of scoreCases, the
// baseline file's writing and the step outputs.

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ghartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/baseline/glartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// baselineAuto is the --baseline value that looks the baseline up in GitHub Actions.
const baselineAuto = "auto"

// baselineFlags are check's comparison flags.
// The regression gates are check.Options' (RankDrop, MaxDrop from the
// --max-drop-MEASURE flags, GroupMaxDrop, Test).
type baselineFlags struct {
	path, write string
	artifact    string             // --baseline-artifact
	raw         map[string]*string // --max-drop-hit, ... as given
}

// maxDropsFlag is --max-drop / --max-drops: the floor grammar (floorFlag), its
// errors worded for a regression gate.
type maxDropsFlag struct{ floorFlag }

func (f *maxDropsFlag) Set(v string) error {
	if err := f.floorFlag.Set(v); err != nil {
		msg := strings.NewReplacer("two floors on", "two regression gates on", "floor expression", "--max-drop expression").Replace(err.Error())
		return errors.New(msg)
	}
	return nil
}

// churnFlag is --min-rbo or --max-churn: [GROUP=]F, repeatable, one per line
// in its Action input (baseline.AddChurnLines).
type churnFlag struct {
	key  string
	list *floor.List
}

func (f *churnFlag) String() string {
	if f == nil || f.list == nil {
		return ""
	}
	s := make([]string, len(*f.list))
	for i, x := range *f.list {
		s[i] = floor.QuoteGroup(x.Group) + "=" + format.Full(x.Value)
	}
	return strings.Join(s, "\n")
}

func (f *churnFlag) Set(v string) error { return baseline.AddChurnLines(f.list, f.key, v) }

func (b *baselineFlags) register(fs *flag.FlagSet, o *check.Options) {
	fs.StringVar(&b.path, "baseline", "", "compare with the baseline run in `FILE` (a --write-baseline file or a --cases-out file), paired by case id; auto finds it in GitHub Actions or GitLab CI")
	fs.StringVar(&b.artifact, "baseline-artifact", "", "--baseline auto: the artifact `NAME` (GitLab: the job that keeps baseline.jsonl.gz; default retrieval-gate-baseline-<comment-key>)")
	fs.StringVar(&b.write, "write-baseline", "", "write this run as a baseline file (gzip JSONL, schema retrieval-gate/baseline@1) to `FILE`")
	b.raw = map[string]*string{}
	for _, gm := range baseline.GateMeasures {
		b.raw[gm.Key] = fs.String(check.MaxDropOption(gm.Name), "", "regression gate: the drop of the overall mean "+metrics.CaseMeasures[metrics.CaseIndex(gm.Key)].Label+"@k vs the baseline that is tolerated, in [0,1]; none or empty is off")
	}
	groups := &maxDropsFlag{floorFlag{grammar: check.FloorGrammar, list: &o.GroupMaxDrop}}
	fs.Var(groups, "max-drop", "regression gate `MEASURE[@GROUP]=F`: the drop of GROUP's paired mean of MEASURE vs the baseline that is tolerated, in [0,1]; repeatable; a @locale:TAG gate is indicative only. GROUP: "+check.FloorGrammar.GroupUsage())
	fs.Var(groups, "max-drops", "several `MAX_DROPS`, one MEASURE[@GROUP]=F per line (the max-drops Action input); added to --max-drop")
	fs.StringVar(&o.Test, "regression-test", baseline.TestSignificant, "significant: a regression gate fails only when the drop exceeds its tolerance and the paired test rejects at 0.05; any: when the drop exceeds it")
	fs.IntVar(&o.RankDrop, "rank-drop", baseline.DefaultRankDrop, "list a case whose first gold card fell by at least `N` ranks")
	fs.Var(&churnFlag{baseline.KeyRBO, &o.MinRBO}, "min-rbo", "churn gate `[GROUP=]F`: the mean rank-biased overlap of the top k of the cases both runs hold (with or without gold) vs the baseline must be at least F, in [0,1]; F alone is overall; repeatable, one per line in the Action input. GROUP: overall, type:NAME or locale:TAG; a NAME or TAG with '=', surrounding space, a leading '\"' or unprintable characters is written as a Go quoted string: type:\"a=b\"=0.5")
	fs.Var(&churnFlag{baseline.KeyChurn, &o.MaxChurn}, "max-churn", "churn gate `[GROUP=]F`: the share of the cases both runs hold whose top k changed as a set vs the baseline may be at most F, in [0,1]; F alone is overall; repeatable, one per line in the Action input")
}

// validate checks the baseline's flags into o (MaxDrop) and o's regression gates.
func (b *baselineFlags) validate(src *sources, commentKey string, o *check.Options) error {
	if b.artifact == "" {
		b.artifact = ghartifact.DefaultName(commentKey)
	}
	if err := ghartifact.ValidName(b.artifact); err != nil {
		return src.refuseErr("check", "baseline-artifact", err)
	}
	o.MaxDrop = map[string]baseline.Tolerance{}
	for _, gm := range baseline.GateMeasures { // in their order: the first bad one is named
		t, err := gate.ParseFloor(*b.raw[gm.Key])
		if err != nil {
			return src.refuseErr("check", check.MaxDropOption(gm.Name), err)
		}
		o.MaxDrop[gm.Key] = t
	}
	return src.option("check", o.ValidateBaseline())
}

// baselineFile is --baseline when it names a file (not auto).
func (b *baselineFlags) baselineFile() string {
	if b.path == baselineAuto {
		return ""
	}
	return b.path
}

// openBaseline opens --baseline (fetching it with auto) and the temporary body
// of --write-baseline into in (nil when neither flag is given).
func openBaseline(ctx context.Context, env *Env, o *checkOptions, in *check.In) (*check.Baseline, error) {
	b := &o.baseline
	spec := check.BaselineSpec{Path: b.path, Write: b.write != ""}
	if b.path == baselineAuto && inGitLab(env.Getenv) { // the target branch's latest successful pipeline
		found, why := glartifact.Auto(ctx, gitlabCI(env.Getenv), b.artifact, httpretry.Policy{})
		spec.Path, spec.Unavailable = "", why
		if found != nil {
			spec.Path, spec.Name, spec.Source, spec.Cleanup = found.Path, "job "+found.Job+" on "+found.Ref, found.Source(), found.Cleanup
		}
	} else if b.path == baselineAuto {
		found, why := ghartifact.Auto(ctx, env.Getenv, publish.Token(env.Getenv), b.artifact)
		spec.Path, spec.Unavailable = "", why
		if found != nil {
			spec.Path, spec.Name, spec.Source, spec.Cleanup = found.Path, "artifact "+found.Name, found.Source(), found.Cleanup
		}
	}
	return check.OpenBaseline(ctx, spec, in)
}
