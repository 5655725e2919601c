package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// Completer sends one chat completion (an *llm.Client).
type Completer interface {
	Complete(ctx context.Context, r llm.Request) (*llm.Response, error)
}

// Options configure Judge (and a batch run, RunBatch).
type Options struct {
	Client Completer
	Model  string // the model name, part of the cache key and of every record
	Prompt *Prompt
	// Format is FormatJSON (structured output; when the server rejects
	// response_format, the run falls back to FormatText) or FormatText.
	Format string
	Repeat int // judgments per pair (>= 1)
	// Workers is the number of pairs judged at once (the client bounds the
	// requests in flight too).
	Workers int
	// MaxRequests is the client's request budget (0: none): the judgments
	// are then let in as the budget allows in pool order, so that the ones it
	// reaches are those of one worker (Judge).
	MaxRequests int64
	Cache       CacheStore // nil: an in-memory cache
	// Progress is called with judgments done and total (serialised).
	Progress func(done, total int)
	// Secrets are the process's keys and tokens and the credentials of the
	// server URLs given (In.Secrets): removed from every text of the model
	// a Result holds and the cache keeps (a judgment's reason, the answer an
	// unreadable one quotes in its detail; in a batch, a result's error
	// too), with every credential of a known shape or in a URL, as from a
	// server's errors (llm.Redactor). A model, or a server standing in for one,
	// may echo the key it was called with.
	Secrets []string
}

// Judgment is one answer for one (pair, repeat).
type Judgment struct {
	Grade  int
	Valid  bool
	Reason string
	Cause  string // when not Valid: CauseUnparseable, CauseOutOfRange or CauseBudget
	Detail string
	// Cached: read from the cache (the prompt was judged by an earlier run);
	// Reused: not asked, the judgment of an earlier pair of this run with the
	// same prompt (dedup.go).
	Cached bool
	Reused bool
}

// Result is the outcome of Judge (and of a batch run).
type Result struct {
	Pairs  []Pair
	Grades [][]Judgment // [pair][repeat]
	Repeat int
	Model  string
	Prompt *Prompt
	// Format is the answer format in use at the end; FellBack says the server
	// rejected response_format and the run switched to text.
	Format   string
	FellBack bool
	// Requests is the number of chat calls made (a retry after a bad answer is
	// a call; a batch's request lines); Cached the judgments read from the
	// cache (cache hits); Reused the judgments not asked because an earlier
	// pair of the pool has the same prompt (its answer serves both). With the
	// judgments asked they partition Pairs × Repeat.
	Requests, Cached, Reused, BadAnswerRetries int64
	PromptTokens, CompletionTokens             int64
	ResponsesWithoutUsage                      int64
	// Batch is set by a batch run (--batch, --batch-in).
	Batch *BatchStats
	// Known are the pool's pairs labelled in the known qrels (holes.go): not
	// in Pairs, not judged, written to the qrels as given.
	Known []KnownLabel
}

// correction is the follow-up message after an unreadable answer.
const correction = "Your answer could not be read (%s). Answer again, exactly in the required format."

// Judge judges every pair Repeat times, from the cache where it can, each
// distinct prompt once (pairs with the same query and document text share its
// judgments: dedup.go). A server
// error (after the client's retries) or an interruption stops the run; judgments
// already made are in the cache. An answer that stays unparseable or out of
// range after one retry, or a call refused by the request budget, is recorded
// as unjudged, never as a grade.
//
// With a request budget (Options.MaxRequests) the result is the one a single
// worker gets, judging in pool order until the budget is spent: a judgment is
// handed to a worker only when the budget left by the ones before it, counted
// at their most (a request, the text format's after a json refusal and the
// correction turn) while they run and at what they spent once ended, still
// covers its most; otherwise it waits for them to end. Without that order,
// which pair the budget left unjudged depended on which worker asked first.
func Judge(ctx context.Context, pairs []Pair, opt Options) (*Result, error) {
	if opt.Repeat < 1 {
		opt.Repeat = 1
	}
	if opt.Workers < 1 {
		opt.Workers = 4
	}
	if opt.Cache == nil {
		opt.Cache = MemoryCache()
	}
	if opt.Format != FormatText {
		opt.Format = FormatJSON
	}
	res := &Result{Pairs: pairs, Grades: make([][]Judgment, len(pairs)), Repeat: opt.Repeat, Model: opt.Model, Prompt: opt.Prompt}
	for i := range res.Grades {
		res.Grades[i] = make([]Judgment, opt.Repeat)
	}
	r := &runner{opt: opt, res: res, redact: llm.Redactor(opt.Client, opt.Secrets)}
	r.text.Store(opt.Format == FormatText)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	owner := promptOwners(pairs)
	type task struct{ pair, repeat int }
	tasks := make(chan task)
	budget := llm.NewBudget(opt.MaxRequests, len(pairs)*opt.Repeat)
	total := 0
	for i, o := range owner {
		if o == i {
			total += opt.Repeat
		}
	}
	order := &cacheOrder{cache: opt.Cache, entries: map[int]*Entry{}}
	var done atomic.Int64
	var progMu sync.Mutex
	var wg sync.WaitGroup
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				var calls int64
				seq := t.pair*opt.Repeat + t.repeat
				j, e, err := r.judge(ctx, pairs[t.pair], t.repeat, &calls)
				budget.Spent(seq, calls)
				if perr := order.done(seq, e); err == nil {
					err = perr
				}
				if err != nil {
					cancel(err)
					continue
				}
				res.Grades[t.pair][t.repeat] = j
				n := done.Add(1)
				if opt.Progress != nil {
					progMu.Lock()
					opt.Progress(int(n), total)
					progMu.Unlock()
				}
			}
		}()
	}
	// A judgment's most: a request and the correction turn, and the text
	// format's after a json refusal.
	most := func() int64 {
		if r.text.Load() {
			return 2
		}
		return 3
	}
feed:
	for i := range pairs {
		if owner[i] != i {
			continue
		}
		for rep := range opt.Repeat {
			if !budget.Reserve(ctx, i*opt.Repeat+rep, most) {
				break feed
			}
			order.start(i*opt.Repeat + rep)
			select {
			case tasks <- task{i, rep}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(tasks)
	wg.Wait()
	// A run that stopped keeps every judgment it was answered, those after
	// a pair that was not answered too.
	if err := order.flush(); err != nil {
		cancel(err)
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	res.Format = FormatJSON
	if r.text.Load() {
		res.Format = FormatText
	}
	res.FellBack = opt.Format == FormatJSON && r.text.Load()
	res.Requests = r.requests.Load()
	res.Cached = r.cached.Load()
	res.BadAnswerRetries = r.retries.Load()
	res.shareOwners(owner)
	res.PromptTokens = r.promptTokens.Load()
	res.CompletionTokens = r.completionTokens.Load()
	res.ResponsesWithoutUsage = r.noUsage.Load()
	return res, nil
}

type runner struct {
	opt                                     Options
	res                                     *Result
	redact                                  func(string) string // llm.Redactor
	text                                    atomic.Bool
	requests, cached, retries               atomic.Int64
	promptTokens, completionTokens, noUsage atomic.Int64
}

// judge is one judgment of pair p; calls counts the requests it made that
// the budget did not refuse.
func (r *runner) judge(ctx context.Context, p Pair, repeat int, calls *int64) (Judgment, *Entry, error) {
	key := CacheKey(r.opt.Prompt.Hash, r.opt.Model, p.Query, p.Document, repeat)
	if e, ok := r.opt.Cache.Get(key); ok {
		r.cached.Add(1)
		return Judgment{Grade: e.Grade, Valid: true, Reason: r.redact(e.Reason), Cached: true}, nil, nil
	}
	format := FormatJSON
	if r.text.Load() {
		format = FormatText
	}
	msgs := r.opt.Prompt.Messages(p.Query, p.Document, format)
	var pt, ct int64
	var lastErr *AnswerError
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := r.complete(ctx, msgs, format, calls)
		var ae *llm.APIError
		if attempt == 0 && format == FormatJSON && errors.As(err, &ae) && ae.RejectsResponseFormat() {
			// No structured output on this server: text from now on.
			r.text.Store(true)
			format = FormatText
			msgs = r.opt.Prompt.Messages(p.Query, p.Document, format)
			resp, err = r.complete(ctx, msgs, format, calls)
		}
		if errors.Is(err, llm.ErrBudget) {
			return Judgment{Cause: CauseBudget, Detail: "the request budget (--max-requests) was spent"}, nil, nil
		}
		if err != nil {
			return Judgment{}, nil, err
		}
		pt += resp.Usage.PromptTokens
		ct += resp.Usage.CompletionTokens
		g, reason, perr := parseAnswer(resp.Content, r.redact)
		if perr == nil {
			e := &Entry{Key: key, Grade: g, Reason: reason, Model: r.opt.Model, PromptHash: r.opt.Prompt.Hash,
				Repeat: repeat, AnswerFormat: format, PromptTokens: pt, CompletionTokens: ct}
			return Judgment{Grade: g, Valid: true, Reason: reason}, e, nil
		}
		if !errors.As(perr, &lastErr) {
			return Judgment{}, nil, perr
		}
		if attempt == 0 {
			r.retries.Add(1)
			msgs = append(msgs, llm.Message{Role: "assistant", Content: resp.Content}, llm.Message{Role: "user", Content: fmt.Sprintf(correction, lastErr.Detail)})
		}
	}
	return Judgment{Cause: lastErr.Cause, Detail: lastErr.Detail}, nil, nil
}

// cacheOrder puts the run's new judgments in the cache in the pool's order,
// whatever the order of the answers, so that the same inputs append the same
// lines to the cache file: a judgment answered before an earlier pair's waits
// (in memory) until every judgment handed out before it has ended. A run that
// stops (an error, an interruption) puts the ones still waiting (flush); only
// a killed process loses them, at most those answered while the earliest
// judgment in flight was still asked.
type cacheOrder struct {
	cache   CacheStore
	mu      sync.Mutex
	started []int          // the judgments handed out, in pool order
	next    int            // started[next] is the first not yet put
	ended   map[int]bool   // the judgments ended and not yet put
	entries map[int]*Entry // the new judgments among them
	err     error          // the first Put that failed: nothing is put after it
}

// start is told that judgment seq is handed out (seq rises).
func (o *cacheOrder) start(seq int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started = append(o.started, seq)
}

// done is told that judgment seq ended, with its new entry (nil: none to
// keep); it puts every judgment ended in order so far, and returns the error
// of the first Put that failed.
func (o *cacheOrder) done(seq int, e *Entry) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended == nil {
		o.ended = map[int]bool{}
	}
	o.ended[seq] = true
	if e != nil {
		o.entries[seq] = e
	}
	for o.next < len(o.started) && o.ended[o.started[o.next]] {
		o.put(o.started[o.next])
		o.next++
	}
	return o.err
}

// flush puts, in order, every judgment that ended but waits for one that
// did not.
func (o *cacheOrder) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for ; o.next < len(o.started); o.next++ {
		o.put(o.started[o.next])
	}
	return o.err
}

// put puts seq's entry, if any, unless a Put failed.
func (o *cacheOrder) put(seq int) {
	e := o.entries[seq]
	delete(o.entries, seq)
	delete(o.ended, seq)
	if e == nil || o.err != nil {
		return
	}
	o.err = o.cache.Put(*e)
}

func (r *runner) complete(ctx context.Context, msgs []llm.Message, format string, calls *int64) (*llm.Response, error) {
	req := llm.Request{Messages: msgs}
	if format == FormatJSON {
		req.Schema = &llm.Schema{Name: "relevance_judgment", Schema: []byte(answerSchema)}
	}
	resp, err := r.opt.Client.Complete(ctx, req)
	if !errors.Is(err, llm.ErrBudget) {
		*calls++
	}
	if err != nil {
		return nil, err
	}
	r.requests.Add(1)
	if resp.HasUsage {
		r.promptTokens.Add(resp.Usage.PromptTokens)
		r.completionTokens.Add(resp.Usage.CompletionTokens)
	} else {
		r.noUsage.Add(1)
	}
	return resp, nil
}

// Relevance is a pair's label: the lower median of its valid grades over the
// repeats (the grade itself when Repeat is 1); ok is false when no repeat gave
// a valid grade (the pair is unjudged).
func (res *Result) Relevance(i int) (rel int, ok bool) {
	var gs []int
	for _, j := range res.Grades[i] {
		if j.Valid {
			gs = append(gs, j.Grade)
		}
	}
	if len(gs) == 0 {
		return 0, false
	}
	slices.Sort(gs)
	return gs[(len(gs)-1)/2], true
}

// Reason is the reason of a pair's first valid judgment.
func (res *Result) Reason(i int) string {
	for _, j := range res.Grades[i] {
		if j.Valid {
			return j.Reason
		}
	}
	return ""
}
