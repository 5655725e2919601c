package evaluate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// Front is the front end's part of an evaluation. When a stage starts it
// opens what the stage reads, makes the stage's services and creates its
// outputs (so that what fails is that stage's error, as when the stage runs
// alone, and an unwritable output fails before the stage's work); when the
// stage ends it keeps what the stage produced (the files of the evaluation's
// directory, what the stage says and publishes), so that a later stage that
// fails leaves the earlier stages' files for a rerun from DIR/stages.txt. Run
// passes the stages' outputs on to the next stages in memory; the front end
// reads none of them back.
type Front interface {
	// Start is told that stage i of n begins.
	Start(i, n int, s Stage)
	// KB is the knowledge base (Options.KB) of every stage, loaded when the
	// first stage that reads it runs (generate, else the first retrieve);
	// the stages only read it.
	KB(ctx context.Context) (*kbfile.KB, error)
	// Generate is the generate stage's services: its clients, batch state,
	// log and progress (Run sets the KB and the cases' writer).
	Generate(ctx context.Context, s *GenerateStage) (generate.In, error)
	// Generated keeps the generated cases (s.Out).
	Generated(ctx context.Context, s *GenerateStage, res *generate.RunResult, cases []byte) error
	// Retrieve starts a retrieve stage; given, when the cases are given
	// (Options.Cases), it opens them, and Run reads them from their start.
	Retrieve(ctx context.Context, s RetrieveStage, given bool) (io.ReadSeeker, error)
	// Retrieved keeps a retrieve stage's run (s.Out).
	Retrieved(ctx context.Context, s RetrieveStage, res *retrieve.RunResult, run []byte) error
	// Judge is the judge stage's services: its clients, cache, batch state,
	// clock, log and progress (Run sets the KB and the runs).
	Judge(ctx context.Context, s *JudgeStage) (judge.In, error)
	// Judged keeps the judge stage's labels: s.QrelsOut (qrels, as
	// judge.WriteTREC wrote them), its judgments and its report.
	Judged(ctx context.Context, s *JudgeStage, res *judge.RunResult, qrels []byte) error
	// Compare starts the compare stage; Compared keeps its reports.
	Compare(ctx context.Context, s CompareStage) error
	Compared(ctx context.Context, s CompareStage, res *compare.Result) error
}

// In is what an evaluation is given: its front end, and the compare stage's
// comment flags (the front end's) for that stage's command line.
type In struct {
	Front        Front
	CompareFlags []string
}

// Result is everything an evaluation computed: the plan it ran, and each
// stage's result (Generated nil when the cases were given; Retrieved in the
// plan's order).
type Result struct {
	Plan      *Plan
	Generated *generate.RunResult
	Retrieved []*retrieve.RunResult
	Judge     *judge.RunResult
	Compare   *compare.Result
}

// StageError is the error of the stage that failed (I of N, named Name); the
// stages after it did not run.
type StageError struct {
	I    int
	Name string
	Err  error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("evaluate: stage %d (%s) failed: %v", e.I, e.Name, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// Run runs the evaluation of o's (validated) options, stage by stage in the
// plan's order (NewPlan): generate.Run (when no cases are given), retrieve.Run
// of every run, judge.Run of their pool and compare.Run of the judge's qrels,
// each stage's output handed to the next in memory (the cases, the runs, the
// qrels as the judge writes them) and to the front end, which keeps it. It
// stops at the first stage that fails, with a *StageError.
func Run(ctx context.Context, in In, o *Options) (*Result, error) {
	f := in.Front
	p := NewPlan(o)
	stages := p.Stages(o, in.CompareFlags...)
	res := &Result{Plan: p}
	i := 0
	step := func(run func() error) error {
		s := stages[i]
		i++
		f.Start(i, len(stages), s)
		if err := run(); err != nil {
			return &StageError{I: i, Name: s.Name, Err: err}
		}
		return nil
	}
	var kb *kbfile.KB
	loadKB := func() error {
		if kb != nil {
			return nil
		}
		var err error
		if kb, err = f.KB(ctx); err != nil {
			return err
		}
		return qrelsCards(kb)
	}

	// The cases: generated into memory, or the given file.
	var cases io.ReadSeeker
	if g := p.Generate; g != nil {
		err := step(func() error {
			gi, err := f.Generate(ctx, g)
			if err != nil {
				return err
			}
			if err := loadKB(); err != nil {
				return err
			}
			var buf bytes.Buffer
			gi.KB, gi.Out, gi.OutName = kb, &buf, g.Out
			if res.Generated, err = generate.Run(ctx, gi, *g); err != nil {
				return err
			}
			cases = bytes.NewReader(buf.Bytes())
			return f.Generated(ctx, g, res.Generated, buf.Bytes())
		})
		if err != nil {
			return nil, err
		}
	}

	// The runs, each kept in memory for the judge and the comparison.
	runs := make([][]byte, len(p.Retrieves))
	for x, r := range p.Retrieves {
		err := step(func() error {
			c, err := f.Retrieve(ctx, r, p.Generate == nil)
			if err != nil {
				return err
			}
			if cases == nil {
				cases = c
			}
			if _, err := cases.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("failed to read cases: %w", err)
			}
			if err := loadKB(); err != nil {
				return err
			}
			var buf bytes.Buffer
			rr, err := retrieve.Run(ctx, retrieve.In{KB: kb, Cases: cases, CasesName: r.Cases, Out: &buf, OutName: r.Out}, r.Run)
			if err != nil {
				return err
			}
			res.Retrieved, runs[x] = append(res.Retrieved, rr), buf.Bytes()
			return f.Retrieved(ctx, r, rr, runs[x])
		})
		if err != nil {
			return nil, err
		}
	}

	// The judge's labels of the runs' pool, and its qrels in memory.
	j := &p.Judge
	var qrels bytes.Buffer
	err := step(func() error {
		ji, err := f.Judge(ctx, j)
		if err != nil {
			return err
		}
		if err := loadKB(); err != nil {
			return err
		}
		ji.KB = kb
		for x, r := range j.Runs {
			ji.Runs = append(ji.Runs, judge.RunReader{Name: r.Name, File: r.Path, R: bytes.NewReader(runs[x])})
		}
		if res.Judge, err = judge.Run(ctx, ji, *j); err != nil {
			return err
		}
		if res.Judge.Result == nil {
			return errors.New("the judge labelled nothing")
		}
		if err := judge.WriteTREC(&qrels, res.Judge.Result); err != nil {
			return err
		}
		return f.Judged(ctx, j, res.Judge, qrels.Bytes())
	})
	if err != nil {
		return nil, err
	}
	kb = nil

	// The comparison of the runs on the judge's qrels.
	c := p.Compare
	err = step(func() error {
		if err := f.Compare(ctx, c); err != nil {
			return err
		}
		// The cases say what each query is (its text, locale and cluster).
		if _, err := cases.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("failed to read cases: %w", err)
		}
		ci := compare.In{Qrels: compare.Reader{Name: c.Files.Qrels, R: bytes.NewReader(qrels.Bytes())},
			Queries: compare.Reader{Name: c.Files.Queries, R: cases}}
		for x, r := range c.Files.Runs {
			ci.Runs = append(ci.Runs, compare.RunReader{Strategy: r.Name, Reader: compare.Reader{Name: r.Path, R: bytes.NewReader(runs[x])}})
		}
		var err error
		if res.Compare, err = compare.Run(ctx, ci, c.Run); err != nil {
			return err
		}
		return f.Compared(ctx, c, res.Compare)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// qrelsCards refuses, when the KB is loaded (before the generate stage asks
// anything), a card whose id holds white space: the judge stage writes its
// labels as TREC qrels (DIR/qrels.txt), whose fields cannot hold it, both as
// a document id and in the id of a query generated from the card
// ("gen-CARD-N"), so the evaluation could not finish, and it stopped at the
// judge stage after the generator's requests were spent.
func qrelsCards(kb *kbfile.KB) error {
	for _, c := range kb.Cards {
		if strings.ContainsAny(c.ID, " \t\r\n\v\f") {
			return input.Errorf(c.File, c.Line, "card id %q holds white space, which the judge's TREC qrels (DIR/qrels.txt) cannot hold, as a document id or in a generated query's id: rename the card", c.ID)
		}
	}
	return nil
}
