// Package generate writes evaluation queries with an LLM: it samples knowledge-base
// documents (seeded, stratified by locale), asks a chat server (package llm) for
// natural-language questions and keyword queries in each document's language,
// drops near-duplicates, optionally keeps only the queries some retrieval
// strategy answers with their source document (a round-trip consistency filter),
// and writes cases whose gold is the source card.
package generate

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/text"
)

// DefaultPromptVersion names the embedded prompt, prompts/queries-v2.txt. v2
// (issue 20 item 13): the instructions are the system message, the card the
// user message between tags it cannot close (messages).
const DefaultPromptVersion = "queries-v2"

//go:embed prompts/queries-v2.txt
var defaultPrompt string

// Query styles.
const (
	Question = "question"
	Keyword  = "keyword"
)

// Prompt is a generator prompt template.
type Prompt struct {
	Version, Hash, Template string
}

// DefaultPrompt is the embedded, versioned prompt.
func DefaultPrompt() *Prompt {
	return &Prompt{Version: DefaultPromptVersion, Hash: judge.HashText(defaultPrompt), Template: defaultPrompt}
}

// ParsePrompt is the template read from the file at path (--prompt; the front
// end reads it): it must hold {{document}}. Its version is "file:" and the
// file's base name.
func ParsePrompt(path string, b []byte) (*Prompt, error) {
	t, err := judge.PromptText(path, b)
	if err != nil {
		return nil, err
	}
	if err := judge.CheckPlaceholders(path, t, "{{document}}", "{{locale}}", "{{questions}}", "{{keywords}}", "{{answer_format}}"); err != nil {
		return nil, err
	}
	if !strings.Contains(t, "{{document}}") {
		return nil, input.Errorf(path, 0, "prompt template has no {{document}} placeholder")
	}
	return &Prompt{Version: "file:" + filepath.Base(path), Hash: judge.HashText(t), Template: t}, nil
}

var formatInstruction = map[string]string{
	judge.FormatJSON: `Answer with a JSON object {"questions": [...], "keywords": [...]}.`,
	judge.FormatText: `Write one query per line: each question as "question: ..." and each keyword query as "keyword: ...", nothing else.`,
}

// messages is the conversation asking for one card's queries: the template,
// the instructions, as the system message ({{document}} replaced by the tags
// that enclose the card); the card alone as the user message, between tags
// whose id (judge.TagID) occurs nowhere in it, so no card text can close them.
func (p *Prompt) messages(c kbfile.Card, nq, nk int, format string) []llm.Message {
	t := p.Template
	if !strings.Contains(t, "{{answer_format}}") {
		t = strings.TrimRight(t, "\n") + "\n\n{{answer_format}}\n"
	}
	loc := c.Locale
	if loc == "" {
		loc = "unknown: use the document's language"
	}
	doc := judge.DocumentText(c)
	id := judge.TagID(doc)
	open, end := "<document-"+id+">", "</document-"+id+">"
	system := strings.NewReplacer("{{document}}", open+"…"+end, "{{locale}}", loc,
		"{{questions}}", strconv.Itoa(nq), "{{keywords}}", strconv.Itoa(nk), "{{answer_format}}", formatInstruction[format]).Replace(t)
	return []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: open + "\n" + doc + "\n" + end + "\n"}}
}

func schema(nq, nk int) json.RawMessage {
	arr := func(n int) string {
		return fmt.Sprintf(`{"type": "array", "items": {"type": "string"}, "minItems": %d, "maxItems": %d}`, n, n)
	}
	return json.RawMessage(`{"type": "object", "properties": {"questions": ` + arr(nq) + `, "keywords": ` + arr(nk) +
		`}, "required": ["questions", "keywords"], "additionalProperties": false}`)
}

// Sample picks up to perLocale cards with text from each locale, seeded: the
// same KB and seed give the same sample. Cards come out by locale, then in
// sampled order.
func Sample(kb *kbfile.KB, perLocale int, seed uint64) []kbfile.Card {
	byLoc := map[string][]kbfile.Card{}
	for _, c := range kb.Cards {
		if strings.TrimSpace(c.Text) == "" {
			continue
		}
		byLoc[c.Locale] = append(byLoc[c.Locale], c)
	}
	locs := make([]string, 0, len(byLoc))
	for l := range byLoc {
		locs = append(locs, l)
	}
	slices.Sort(locs)
	var out []kbfile.Card
	for _, l := range locs {
		cs := byLoc[l]
		h := fnv.New64a()
		_, _ = h.Write([]byte(l))
		r := rand.New(rand.NewPCG(seed, h.Sum64()))
		r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		out = append(out, cs[:min(perLocale, len(cs))]...)
	}
	return out
}

// Case is one generated query.
type Case struct {
	ID, Locale, Query, Style, Card string
}

// Options configure Generate.
type Options struct {
	Client    judge.Completer
	Model     string
	Prompt    *Prompt
	Format    string // judge.FormatJSON (falls back to text when rejected) or judge.FormatText
	Questions int    // natural-language questions per document
	Keywords  int    // keyword queries per document
	Workers   int
	// MaxRequests is the client's request budget (0: none): the cards are
	// then let in as the budget allows in card order, so that the cards it
	// reaches are those of one worker (Generate).
	MaxRequests int64
	// Jaccard is the near-duplicate threshold: a query whose token set has a
	// Jaccard similarity ≥ Jaccard with a kept query of its locale is dropped.
	Jaccard  float64
	Progress func(done, total int)
	// Secrets are the process's keys and tokens and the credentials of the
	// server URLs given (In.Secrets). A query the model wrote that holds one
	// of them, the client's own (its API key, its URL's credentials) or a
	// credential of a known shape or in a URL (llm.Redactor) is dropped and
	// counted (Result.SecretDropped), and the reason an answer could not be
	// read, which quotes it, is redacted: a model, or a server standing in
	// for one, may echo the key it was called with.
	Secrets []string
}

// Result is the outcome of Generate.
type Result struct {
	Cases []Case
	// Documents asked about; Failed those whose answer stayed unreadable after one retry.
	Documents, Failed, BudgetSkipped int
	NearDuplicates                   int
	// SecretDropped counts the queries dropped because they held a secret
	// (Options.Secrets).
	SecretDropped                  int
	Requests                       int64
	PromptTokens, CompletionTokens int64
	FellBack                       bool
	// BatchID and BatchStatus are the batch's (generate --batch); BatchResumed
	// says it was picked up from the state file.
	BatchID, BatchStatus string
	BatchResumed         bool
	// BatchMode is "api" (--batch) or "file" (--batch-out, --batch-in), ""
	// online; BatchRequests the request lines of the batch; RequestsOnly says
	// the requests were written (--batch-out) and nothing was asked.
	BatchMode     string
	BatchRequests int64
	RequestsOnly  bool
}

// Generate asks for queries about every card, in parallel, and returns them in card
// order with near-duplicates dropped.
//
// With a request budget (Options.MaxRequests) the result is the one a single
// worker gets, asking card after card until the budget is spent: a card is
// handed to a worker only when the budget left by the cards before it,
// counted at their most (a first request, the text format's after a json
// refusal and the correction turn), still covers its most; otherwise it
// waits for those cards to end and counts what they did spend. Without that
// order, which card's request the budget refused depended on which worker
// asked first, and the same run wrote different cases.
func Generate(ctx context.Context, cards []kbfile.Card, opt Options) (*Result, error) {
	if opt.Workers < 1 {
		opt.Workers = 4
	}
	if opt.Format != judge.FormatText {
		opt.Format = judge.FormatJSON
	}
	type answer struct {
		qs, ks []string
		failed bool
		budget bool
	}
	answers := make([]answer, len(cards))
	res := &Result{Documents: len(cards)}
	var text atomic.Bool
	text.Store(opt.Format == judge.FormatText)
	var requests, pt, ct atomic.Int64
	redact := llm.Redactor(opt.Client, opt.Secrets)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idx := make(chan int)
	var wg sync.WaitGroup
	var done atomic.Int64
	var progMu sync.Mutex
	budget := llm.NewBudget(opt.MaxRequests, len(cards))
	ask := func(msgs []llm.Message, format string, calls *int64) (*llm.Response, error) {
		req := llm.Request{Messages: msgs}
		if format == judge.FormatJSON {
			req.Schema = &llm.Schema{Name: "generated_queries", Schema: schema(opt.Questions, opt.Keywords)}
		}
		r, err := opt.Client.Complete(ctx, req)
		if !errors.Is(err, llm.ErrBudget) {
			*calls++
		}
		if err == nil {
			requests.Add(1)
			pt.Add(r.Usage.PromptTokens)
			ct.Add(r.Usage.CompletionTokens)
		}
		return r, err
	}
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				format := judge.FormatJSON
				if text.Load() {
					format = judge.FormatText
				}
				msgs := opt.Prompt.messages(cards[i], opt.Questions, opt.Keywords, format)
				var a answer
				var calls int64
				for attempt := 0; attempt < 2; attempt++ {
					r, err := ask(msgs, format, &calls)
					var ae *llm.APIError
					if attempt == 0 && format == judge.FormatJSON && errors.As(err, &ae) && ae.RejectsResponseFormat() {
						text.Store(true)
						format = judge.FormatText
						msgs = opt.Prompt.messages(cards[i], opt.Questions, opt.Keywords, format)
						r, err = ask(msgs, format, &calls)
					}
					if errors.Is(err, llm.ErrBudget) {
						a.budget = true
						break
					}
					if errors.Is(err, errNotAnswered) {
						a.failed = true
						break
					}
					if err != nil {
						cancel(err)
						break
					}
					qs, ks, perr := ParseQueries(r.Content, opt.Questions, opt.Keywords)
					if perr == nil {
						a.qs, a.ks = qs, ks
						break
					}
					a.failed = attempt == 1
					perr = errors.New(redact(perr.Error())) // it may quote what the model wrote
					msgs = append(msgs, llm.Message{Role: "assistant", Content: r.Content},
						llm.Message{Role: "user", Content: fmt.Sprintf("Your answer could not be read (%v). Answer again, exactly in the required format.", perr)})
				}
				answers[i] = a
				budget.Spent(i, calls)
				n := done.Add(1)
				if opt.Progress != nil {
					progMu.Lock()
					opt.Progress(int(n), len(cards))
					progMu.Unlock()
				}
			}
		}()
	}
	// A card's most: a request and the correction turn, and the text
	// format's after a json refusal.
	most := func() int64 {
		if text.Load() {
			return 2
		}
		return 3
	}
feed:
	for i := range cards {
		if !budget.Reserve(ctx, i, most) {
			break feed
		}
		select {
		case idx <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(idx)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	kept := map[string][]map[string]bool{} // locale -> token sets of kept queries
	for i, a := range answers {
		c := cards[i]
		switch {
		case a.budget:
			res.BudgetSkipped++
			continue
		case a.failed:
			res.Failed++
			continue
		}
		n := 0
		add := func(q, style string) {
			if redact(q) != q { // it held a secret: dropped, not written as ***
				res.SecretDropped++
				return
			}
			set := tokenSet(q)
			for _, k := range kept[c.Locale] {
				if len(set) == 0 || Jaccard(set, k) >= opt.Jaccard {
					res.NearDuplicates++
					return
				}
			}
			if len(set) == 0 {
				res.NearDuplicates++
				return
			}
			kept[c.Locale] = append(kept[c.Locale], set)
			n++
			res.Cases = append(res.Cases, Case{ID: fmt.Sprintf("gen-%s-%d", c.ID, n), Locale: c.Locale, Query: q, Style: style, Card: c.ID})
		}
		for _, q := range a.qs {
			add(q, Question)
		}
		for _, k := range a.ks {
			add(k, Keyword)
		}
	}
	res.Requests, res.PromptTokens, res.CompletionTokens = requests.Load(), pt.Load(), ct.Load()
	res.FellBack = opt.Format == judge.FormatJSON && text.Load()
	return res, nil
}

func tokenSet(q string) map[string]bool {
	set := map[string]bool{}
	for _, t := range text.Tokens(q) {
		set[t] = true
	}
	return set
}

// Jaccard is |a ∩ b| / |a ∪ b| of two token sets (0 when both are empty).
func Jaccard(a, b map[string]bool) float64 {
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// ParseQueries reads exactly nq questions and nk keyword queries: a JSON object
// {"questions": [...], "keywords": [...]}, else lines "question: ..." and
// "keyword: ..." (blank lines ignored, any other line is an error). Empty
// queries and wrong counts are errors.
func ParseQueries(content string, nq, nk int) (qs, ks []string, err error) {
	c := strings.TrimSpace(content)
	if strings.HasPrefix(c, "{") {
		// jsonpos first, the one JSON rule of every input: a repeated key
		// ({"questions": [...], "questions": [...]}) is refused.
		var sc jsonpos.Scanner
		if err := sc.Check([]byte(c)); err != nil {
			var se *jsonpos.SyntaxError
			if errors.As(err, &se) && se.NotSyntax() {
				return nil, nil, fmt.Errorf("not a JSON object {\"questions\", \"keywords\"}: %s", se.Describe())
			}
			return nil, nil, fmt.Errorf("not a JSON object {\"questions\", \"keywords\"}")
		}
		// The keys in any case, as the lines' "Question:" (an LLM may
		// capitalize them), but each once: encoding/json's own field match
		// let a "Keywords" after the "keywords" replace them.
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c), &obj); err != nil || obj == nil {
			return nil, nil, fmt.Errorf("not a JSON object {\"questions\", \"keywords\"}")
		}
		var seen [2]bool
		for k, raw := range obj {
			var dst *[]string
			i := 0
			switch strings.ToLower(k) {
			case "questions":
				dst = &qs
			case "keywords":
				dst, i = &ks, 1
			default:
				return nil, nil, fmt.Errorf("not a JSON object {\"questions\", \"keywords\"}")
			}
			if seen[i] {
				return nil, nil, fmt.Errorf("not a JSON object {\"questions\", \"keywords\"}: %q given twice, in two spellings", strings.ToLower(k))
			}
			seen[i] = true
			if err := json.Unmarshal(raw, dst); err != nil {
				return nil, nil, fmt.Errorf("not a JSON object {\"questions\", \"keywords\"}")
			}
		}
	} else {
		for _, ln := range strings.Split(c, "\n") {
			ln = strings.TrimSpace(ln)
			if ln == "" {
				continue
			}
			style, q, ok := strings.Cut(ln, ":")
			switch strings.ToLower(strings.TrimSpace(style)) {
			case Question:
				qs = append(qs, q)
			case Keyword:
				ks = append(ks, q)
			default:
				ok = false
			}
			if !ok {
				return nil, nil, fmt.Errorf("line %q is neither \"question: ...\" nor \"keyword: ...\"", ln)
			}
		}
	}
	for _, list := range [][]string{qs, ks} {
		for i, q := range list {
			list[i] = strings.Join(strings.Fields(q), " ")
			if list[i] == "" {
				return nil, nil, fmt.Errorf("an empty query")
			}
		}
	}
	if len(qs) != nq || len(ks) != nk {
		return nil, nil, fmt.Errorf("want %d questions and %d keyword queries, got %d and %d", nq, nk, len(qs), len(ks))
	}
	return qs, ks, nil
}

// Searcher answers queries (a *retrieve.Index).
type Searcher interface {
	Search(ctx context.Context, qs []retrieve.Query) ([][]retrieve.Result, error)
}

// RoundTrip keeps the cases whose source card some searcher ranks in its top
// results (the searchers were built with the filter's k), and returns how many
// were dropped.
func RoundTrip(ctx context.Context, cases []Case, searchers []Searcher) ([]Case, int, error) {
	qs := make([]retrieve.Query, len(cases))
	for i, c := range cases {
		qs[i] = retrieve.Query{Text: c.Query, Locale: c.Locale}
	}
	found := make([]bool, len(cases))
	for _, s := range searchers {
		res, err := s.Search(ctx, qs)
		if err != nil {
			return nil, 0, err
		}
		for i, rs := range res {
			for _, r := range rs {
				if r.ParentID == cases[i].Card {
					found[i] = true
				}
			}
		}
	}
	var out []Case
	for i, c := range cases {
		if found[i] {
			out = append(out, c)
		}
	}
	return out, len(cases) - len(out), nil
}

// WriteCase renders one case line: {"id", "locale", "type": "generated",
// "query", "query_style", "cluster": card, "must_cite_one_of": [card],
// "generator": {"model", "prompt_version", "prompt_hash"}}. The cluster is the
// card the query was written from: the questions and the keyword query of one
// card are a family, not independent cases (issue 34).
func WriteCase(c Case, model string, p *Prompt) ([]byte, error) {
	type gen struct {
		Model         string `json:"model"`
		PromptVersion string `json:"prompt_version"`
		PromptHash    string `json:"prompt_hash"`
	}
	v := struct {
		ID        string   `json:"id"`
		Locale    string   `json:"locale,omitempty"`
		Type      string   `json:"type"`
		Query     string   `json:"query"`
		Style     string   `json:"query_style"`
		Cluster   string   `json:"cluster"`
		Gold      []string `json:"must_cite_one_of"`
		Generator gen      `json:"generator"`
	}{c.ID, c.Locale, "generated", c.Query, c.Style, c.Card, []string{c.Card}, gen{model, p.Version, p.Hash}}
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}
