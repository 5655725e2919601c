package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// BatchOptions select a batch run (at most one of the modes).
type BatchOptions struct {
	// RequestsOut, when set, receives the Batch API requests JSONL of the
	// judgments not in the cache (up to MaxRequests) and nothing is judged.
	RequestsOut io.Writer
	// ResultsIn, when its R is set, is a results JSONL in the Batch API's
	// output format (--batch-in): its answers fill the cache and the labels.
	ResultsIn Reader
	// Provider is the format of the request and result lines of RequestsOut
	// and ResultsIn (llm.Providers; "" is OpenAI's); with API, API's.
	Provider string
	// API runs the batch through a provider's batch API (--batch), the
	// submitted batch kept in State.
	API   llm.BatchService
	State BatchStore
	// Poll is the backoff of the status polls (zero: llm.DefaultPoll).
	Poll llm.PollPolicy
	// MaxRequests caps the request lines of the batch (0: no limit); the
	// judgments beyond it are unjudged with CauseBudget.
	MaxRequests int64
	// Now is the clock of WaitSeconds (nil: time.Now).
	Now func() time.Time
	// Secrets are the process's keys and tokens (In.Secrets): removed, with
	// Options.Secrets, from the error text of every result line, the
	// model's reason and an unreadable answer (llm.Redactor), in every mode.
	Secrets []string
}

// BatchStore keeps a submitted batch between runs, for a rerun to resume it
// (judge --batch, generate --batch): its state (Load: nil when there is none;
// Save; Remove) and the temporary files of the requests uploaded and the
// results downloaded (Temp, removed by the caller once used). The front end
// opens it (StateFile).
type BatchStore interface {
	Name() string // in messages
	Load() (*BatchState, error)
	Save(st *BatchState) error
	Remove() error
	Temp(what string) (*os.File, error) // what: "requests" or "results"
}

// StateFile is the BatchStore of the state file at Path (CACHE +
// BatchStateSuffix for judge, OUT + BatchStateSuffix for generate), written
// atomically; the temporary files are created beside it, by Scratch.
type StateFile struct {
	Path string
	// Scratch creates the scratch file NAME in dir after removing the
	// leftovers of killed runs of NAME and of also (the front end's
	// atomicfile.CreateTemp); nil is a plain os.CreateTemp.
	Scratch func(dir, name string, also ...string) (*os.File, error)
}

// Name is the state file's path.
func (s StateFile) Name() string { return s.Path }

// Load reads the state file; a missing file is (nil, nil).
func (s StateFile) Load() (*BatchState, error) { return ReadBatchState(s.Path) }

// Save writes st to the state file atomically.
func (s StateFile) Save(st *BatchState) error { return writeBatchState(s.Path, st) }

// Remove removes the state file (an error when there is none).
func (s StateFile) Remove() error { return os.Remove(s.Path) }

// Temp creates a temporary file beside the state file, for what ("requests",
// "results"): ".STATE.WHAT.tmp-pPID-RANDOM", named and cleaned up by Scratch
// (the front end's is atomicfile's rule: a later run removes those of a run
// killed with SIGKILL, once its PID is gone; those of both kinds, as a run
// that resumes a batch writes no requests file). The scratch files of earlier
// versions in the same directory are removed first once they are old enough
// (removeOldScratch).
func (s StateFile) Temp(what string) (*os.File, error) {
	dir, base := filepath.Dir(s.Path), filepath.Base(s.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the cache's directory (the cache creates it at its first judgment)
		return nil, err
	}
	removeOldScratch(dir, time.Now())
	var also []string
	for _, w := range batchScratch {
		if w != what {
			also = append(also, base+"."+w)
		}
	}
	if s.Scratch == nil {
		return os.CreateTemp(dir, "."+base+"."+what+".tmp-p"+strconv.Itoa(os.Getpid())+"-*")
	}
	return s.Scratch(dir, base+"."+what, also...)
}

// batchScratch are the kinds of a batch's scratch files (StateFile.Temp).
var batchScratch = []string{"requests", "results"}

// OldScratchAge is how long ago a scratch file of an earlier version
// (removeOldScratch) must have been last written before a batch run removes
// it: longer than any batch lives (OpenAI's and Anthropic's expire after 24
// hours, Gemini's after 48 pending or running), so the files of an earlier
// version's run still waiting on its batch in the same directory are kept.
const OldScratchAge = 7 * 24 * time.Hour

// removeOldScratch removes from dir the scratch files earlier versions of
// judge --batch and generate --batch left: they created the batch's requests
// and downloaded results beside the state file as ".batch-requests-N.jsonl"
// and ".batch-results-N.jsonl" (N os.CreateTemp's decimal number), and a run
// killed with SIGKILL left them, a whole pool's prompts each. Their names say
// neither which state file nor which process they belong to, so a file is
// removed only when it is provably one: a regular file (no link, no
// directory) of exactly that name, in the directory the state files are in,
// last modified more than OldScratchAge ago. Errors are ignored, as
// atomicfile ignores them for its leftovers: a file that cannot be removed
// harms nothing but disk space.
func removeOldScratch(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !oldScratchName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > OldScratchAge {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// oldScratchName reports whether name is ".batch-requests-N.jsonl" or
// ".batch-results-N.jsonl", N decimal digits.
func oldScratchName(name string) bool {
	for _, w := range batchScratch {
		if n, ok := strings.CutPrefix(name, ".batch-"+w+"-"); ok {
			n, ok = strings.CutSuffix(n, ".jsonl")
			return ok && n != "" && strings.Trim(n, "0123456789") == ""
		}
	}
	return false
}

// BatchStateSuffix is appended to the cache's path to name the state file of
// a submitted batch.
const BatchStateSuffix = ".batch.json"

// BatchStateSchema names the state file's format.
const BatchStateSchema = "retrieval-gate/judge-batch@1"

// BatchState is the state file of a submitted batch: a rerun reads it and
// waits for this batch instead of submitting another.
type BatchState struct {
	Schema      string `json:"schema"`
	BatchID     string `json:"batch_id"`
	InputFileID string `json:"input_file_id"`
	Requests    int64  `json:"requests"`
	Model       string `json:"model"`
	PromptHash  string `json:"prompt_hash"`
	Format      string `json:"answer_format"`
	// Provider is the batch API the batch was submitted to (absent in state
	// files written before there were several: OpenAI's).
	Provider string `json:"provider,omitempty"`
	// Creating says a run was creating the batch and did not learn whether
	// the provider created it (interrupted once the creation was sent, or the
	// creation failed without saying): BatchID is empty, and a rerun refuses
	// to submit another batch until the user has looked (and deleted the
	// state file).
	Creating bool `json:"creating,omitempty"`
}

// maxBatchStateBytes caps a batch's state file (a few hundred bytes as
// written): a larger one is refused before it is read whole.
const maxBatchStateBytes = 64 << 10

// ReadBatchState reads a state file; a missing file is (nil, nil).
func ReadBatchState(path string) (*BatchState, error) {
	if err := refuseSpecial(path, "the batch state file"); err != nil {
		return nil, err
	}
	data, err := input.ReadFile(context.Background(), path, maxBatchStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sc jsonpos.Scanner
	var st BatchState
	if sc.Check(data) != nil || llm.CheckFoldedKeys(data) != nil || json.Unmarshal(data, &st) != nil || st.Schema != BatchStateSchema || (st.BatchID == "") != st.Creating {
		return nil, input.Errorf(path, 1, "not a %s state file (delete it to submit a new batch)", BatchStateSchema)
	}
	return &st, nil
}

// writeBatchState writes st to path atomically (a temporary file renamed).
func writeBatchState(path string, st *BatchState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: the cache's directory (the cache creates it at its first judgment)
		return fmt.Errorf("failed to write the batch state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("failed to write the batch state: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("failed to write the batch state %s: %w", path, err)
	}
	return nil
}

// RunBatch judges pairs through a batch (bo's mode). It returns (nil, nil)
// after writing the requests (RequestsOut).
func RunBatch(ctx context.Context, pairs []Pair, opt Options, bo *BatchOptions, logf func(string, ...any)) (*Result, error) {
	logf = GuardLogf(logf)
	now := bo.Now
	if now == nil {
		now = time.Now
	}
	provider := bo.Provider
	if bo.API != nil {
		provider = bo.API.Provider()
	}
	if provider == "" {
		provider = llm.ProviderOpenAI
	}
	job := newBatchJob(pairs, opt, bo.MaxRequests, provider)
	// Under --batch the batch client's own secrets first (API: its key, its
	// URL's credentials), then bo's and opt's. A results file read back
	// (--batch-in) may come from another machine and echo a key this process
	// never had: no client holds one there, but its text is redacted the
	// same (every credential of a known shape).
	job.redact = llm.Redactor(bo.API, append(slices.Clip(bo.Secrets), opt.Secrets...))
	opt = job.opt
	switch {
	case bo.RequestsOut != nil:
		n, err := job.write(bo.RequestsOut)
		if err != nil {
			return nil, err
		}
		reused := job.reused()
		logf("%d request(s) written (%d judgment(s) cached, %d sharing an identical prompt's request, %d over --max-requests)", n, countTrue(job.cached), reused, int64(len(pairs)*opt.Repeat)-n-int64(countTrue(job.cached))-reused)
		return nil, nil
	case bo.ResultsIn.R != nil:
		if err := job.readResults(ctx, bo.ResultsIn.R, bo.ResultsIn.Name); err != nil {
			return nil, err
		}
		return job.result(&BatchStats{Mode: "file", Provider: provider})
	case bo.API != nil:
		return runBatchAPI(ctx, job, bo, now, logf)
	}
	return nil, errors.New("no batch mode")
}

func countTrue(m [][]bool) int {
	n := 0
	for _, r := range m {
		for _, v := range r {
			if v {
				n++
			}
		}
	}
	return n
}

// runBatchAPI submits the job's requests as one batch (or resumes the batch
// of the state file), waits for it, reads its output and error files and
// builds the result. The state file is removed once the answers are in the
// cache, and when the batch failed (a rerun submits a new one).
func runBatchAPI(ctx context.Context, job *batchJob, bo *BatchOptions, now func() time.Time, logf func(string, ...any)) (*Result, error) {
	if bo.State == nil {
		return nil, errors.New("--batch needs a --cache file (its state file keeps the batch id)")
	}
	st := &BatchStats{Mode: "api", Provider: job.provider}
	start := now()
	if job.nSent == 0 {
		if s, err := bo.State.Load(); err != nil || s == nil {
			if err != nil {
				return nil, err
			}
			logf("every judgment is cached: no batch submitted")
			return job.result(st)
		}
	}
	want := BatchState{Requests: job.nSent, Model: job.opt.Model, PromptHash: job.opt.Prompt.Hash, Format: job.opt.Format, Provider: job.provider}
	sub := &BatchSubmission{API: bo.API, State: bo.State, Poll: bo.Poll, Logf: logf}
	b, state, err := sub.Run(ctx, want, job.write, func(ctx context.Context, r io.Reader, name string) error { return job.readResults(ctx, r, name) })
	if err != nil {
		return nil, err
	}
	st.BatchID, st.InputFileID, st.Resumed, st.Status = state.BatchID, state.InputFileID, sub.Resumed, b.Status
	rc := b.Counts
	st.RequestCounts = &rc
	calls := sub.Calls
	st.Calls = &calls
	st.WaitSeconds = now().Sub(start).Seconds()
	res, err := job.result(st)
	if err != nil {
		return nil, err
	}
	if err := job.opt.Cache.Sync(); err != nil { // the answers kept before the batch is forgotten
		return nil, err
	}
	if err := sub.Done(); err != nil {
		return nil, err
	}
	if st.Missing > 0 {
		logf("batch %s ended %s: %d request(s) without an answer are unjudged (a rerun submits them again)", b.ID, b.Status, st.Missing)
	}
	return res, nil
}

// GuardLogf is logf (nil: a log that says nothing) with every string argument
// written through format.SanitizeText: a batch's log lines carry strings the
// server chose (its batch id, status, file ids), which must not start a line
// of their own (issue 33 item 12: a newline in a batch id began a fake log
// line). Numbers are printed as they are.
func GuardLogf(logf func(string, ...any)) func(string, ...any) {
	if logf == nil {
		return func(string, ...any) {}
	}
	return func(f string, args ...any) {
		safe := make([]any, len(args))
		for i, a := range args {
			if s, ok := a.(string); ok {
				a = format.SanitizeText(s)
			}
			safe[i] = a
		}
		logf(f, safe...)
	}
}

// BatchSubmission runs one batch through a provider's batch API with a state
// file: judge --batch and generate --batch.
type BatchSubmission struct {
	API     llm.BatchService
	State   BatchStore // the submitted batch and the temporary files
	Poll    llm.PollPolicy
	Logf    func(string, ...any)
	Resumed bool // set by Run: the batch came from the state file
	// Calls are the HTTP calls Run made (set by Run).
	Calls llm.CallCounts
}

// Run submits a batch of the requests write writes (or resumes the one of the
// state file, which must match want's provider, model, prompt hash and answer
// format), writes the state file, waits for the batch to end and reads its
// results with read. A failed batch is an error and its state file is
// removed; an interrupted wait keeps it. Call Done once the answers are kept.
func (s *BatchSubmission) Run(ctx context.Context, want BatchState, write func(io.Writer) (int64, error),
	read func(ctx context.Context, r io.Reader, name string) error) (*llm.BatchJob, *BatchState, error) {
	logf := GuardLogf(s.Logf)
	if want.Provider == "" {
		want.Provider = s.API.Provider()
	}
	state, err := s.State.Load()
	if err != nil {
		return nil, nil, err
	}
	if state != nil {
		if state.Provider == "" {
			state.Provider = llm.ProviderOpenAI // a state file written before the providers
		}
		if state.Creating {
			p := format.SanitizeText(state.Provider)
			return nil, nil, fmt.Errorf("%s: a run was interrupted while creating a batch of %d request(s) at %s, and may have created it (it would run, and be billed, at the provider): list your batches at %s and collect or cancel it there; then delete %s to submit a new batch",
				s.State.Name(), state.Requests, p, p, s.State.Name())
		}
		if state.Provider != want.Provider || state.Model != want.Model || state.PromptHash != want.PromptHash || state.Format != want.Format {
			return nil, nil, fmt.Errorf("%s holds batch %s of model %q, prompt %s, answer format %s, batch API %s; this run is model %q, prompt %s, answer format %s, batch API %s: rerun with those, or delete the state file to submit a new batch",
				s.State.Name(), format.SanitizeText(state.BatchID), state.Model, state.PromptHash, state.Format, state.Provider, want.Model, want.PromptHash, want.Format, want.Provider)
		}
		s.Resumed = true
		logf("resuming batch %s (from %s)", state.BatchID, s.State.Name())
	} else {
		tmp, err := s.State.Temp("requests")
		if err != nil {
			return nil, nil, fmt.Errorf("failed to write the batch requests: %w", err)
		}
		defer func() { _ = os.Remove(tmp.Name()) }()
		n, err := write(tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, fmt.Errorf("failed to write the batch requests: %w", err)
		}
		// The state says "creating" before the batch is: a run stopped (or
		// killed) before it learns the batch's id leaves a state file that
		// keeps a rerun from submitting (and paying for) another batch.
		st := want
		st.Schema, st.Requests, st.Creating = BatchStateSchema, n, true
		if err := s.State.Save(&st); err != nil {
			return nil, nil, err
		}
		b, err := submit(ctx, s.API, tmp.Name(), n)
		if err != nil {
			var me *llm.BatchMayExistError
			if errors.As(err, &me) {
				return nil, nil, fmt.Errorf("batch (%s): %w (%s records it: a rerun refuses to submit another batch until it is deleted)", s.API.Provider(), err, s.State.Name())
			}
			if rerr := s.State.Remove(); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				return nil, nil, rerr
			}
			return nil, nil, fmt.Errorf("batch (%s): %w", s.API.Provider(), err)
		}
		s.Calls.Submit += b.SubmitCalls
		st.BatchID, st.InputFileID, st.Creating = b.ID, b.InputRef, false
		state = &st
		if err := s.State.Save(state); err != nil {
			return nil, nil, err
		}
		input := ""
		if b.InputRef != "" {
			input = " (input file " + b.InputRef + ")"
		}
		logf("submitted batch %s to %s: %d request(s)%s; state in %s", b.ID, s.API.Provider(), n, input, s.State.Name())
	}
	last := ""
	b, err := llm.WaitJob(ctx, s.API, state.BatchID, s.Poll, func(b *llm.BatchJob) {
		if b.Status != last {
			last = b.Status
			logf("batch %s: %s (%d/%d done, %d failed)", b.ID, b.Status, b.Counts.Completed, b.Counts.Total, b.Counts.Failed)
		}
	}, &s.Calls.Poll)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("batch %s is still running at the server; rerun to pick it up (%s): %w", format.SanitizeText(state.BatchID), s.State.Name(), ctx.Err())
		}
		return nil, nil, err
	}
	if b.Failed {
		if err := s.State.Remove(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("batch %s %s: %s (state removed: a rerun submits a new batch)", format.SanitizeText(b.ID), format.SanitizeText(b.Status), orNone(b.ErrorText))
	}
	// Ended (completed, expired, cancelled): use every answer there is.
	for _, src := range b.Results {
		s.Calls.Download++
		name := fmt.Sprintf("batch %s %s %s", format.SanitizeText(b.ID), src.What, format.SanitizeText(src.Ref))
		if err := readBatchFile(ctx, s.API, b, src, name, state.Requests, s.State, read); err != nil {
			return nil, nil, err
		}
	}
	return b, state, nil
}

// submitGrace is how long a batch creation under way is given to answer
// once ctx is done: an answer that comes in that time is kept (its id is
// written to the state file, and a rerun resumes the batch), and the run
// still ends within a second of SIGINT/SIGTERM.
var submitGrace = 500 * time.Millisecond

// submit is api.Submit that outlives ctx by at most submitGrace: an
// interruption that comes while the provider is answering the creation does
// not drop the id of the batch it created.
func submit(ctx context.Context, api llm.BatchService, path string, n int64) (*llm.BatchJob, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	type answer struct {
		job *llm.BatchJob
		err error
	}
	done := make(chan answer, 1)
	go func() {
		j, err := api.Submit(sctx, path, n)
		done <- answer{j, err}
	}()
	select {
	case a := <-done:
		return a.job, a.err
	case <-ctx.Done():
	}
	t := time.NewTimer(submitGrace)
	defer t.Stop()
	select {
	case a := <-done:
		return a.job, a.err
	case <-t.C:
	}
	cancel()
	a := <-done
	return a.job, a.err
}

// Done removes the state file: the batch's answers are kept.
func (s *BatchSubmission) Done() error {
	if err := s.State.Remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// batchFileCap bounds a results file of a batch of n requests:
// MaxResultLine for each request it answers. A longer file is refused as its
// download reaches the cap: an endless one never fills the disk.
func batchFileCap(n int64) int64 {
	return max(n, 1) * MaxResultLine
}

// readBatchFile downloads a result source of a batch of n requests to a
// temporary file of the store (streamed, never whole in memory, at most
// batchFileCap(n) bytes) and reads it with read.
func readBatchFile(ctx context.Context, api llm.BatchService, job *llm.BatchJob, src llm.ResultSource, name string, n int64, store BatchStore, read func(ctx context.Context, r io.Reader, name string) error) error {
	tmp, err := store.Temp("results")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	defer tmp.Close()
	limit := batchFileCap(n)
	err = api.Download(ctx, job, src, limit, func() (io.Writer, error) {
		if err := tmp.Truncate(0); err != nil {
			return nil, err
		}
		_, err := tmp.Seek(0, io.SeekStart)
		return tmp, err
	})
	if tl := (*httpretry.TooLargeError)(nil); errors.As(err, &tl) {
		return fmt.Errorf("%s is longer than %d bytes, %d (a chat completion of at most %d and its envelope) for each of the %d request(s) it answers: refused, the download stopped there", name, limit, MaxResultLine, httpretry.MaxAnswer, max(n, 1))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return read(ctx, tmp, name)
}
