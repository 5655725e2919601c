// Package summary writes what the commands without a report document say
// when they finish: judge's and generate's lines on standard output, import's
// on standard error, and the one-line Markdown of import and retrieve for the
// job summary. Like every renderer it does no arithmetic: the numbers come
// from the results.
package summary

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/importer"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// Judge writes judge's summary: the model and prompt, the labels, the
// unjudged answers by cause, requests, tokens and cost, the batch, and the
// judge's self-agreement.
func Judge(w io.Writer, res *judge.Result, s *judge.Summary) {
	model := res.Model
	if model == "" {
		model = "(server default)"
	}
	answer := res.Format
	if res.FellBack {
		answer += " (the server rejected response_format json_schema)"
	}
	fmt.Fprintf(w, "judge: model %s, prompt %s %s, answer format %s\n", format.SanitizeText(model), format.SanitizeText(res.Prompt.Version), res.Prompt.Hash, answer)
	h := res.Holes()
	fmt.Fprintf(w, "judge: pool of %d pair(s): %d already labelled in --known-qrels, %d judged before (cache), %d new (the holes, asked in this run)\n", h.Pool, h.Known, h.Cached, h.New)
	fmt.Fprintf(w, "judge: %d pairs, %d labelled (rel 3: %d, 2: %d, 1: %d, 0: %d), %d unjudged\n",
		s.Pairs, s.Judged, s.Distribution[3], s.Distribution[2], s.Distribution[1], s.Distribution[0], s.Unjudged)
	if res.Batch != nil {
		// A batch has one turn: no correction retry (issue 33 item 13).
		fmt.Fprintf(w, "judge: unjudged answers: %d unparseable, %d out of range (a batch has no correction turn: each was asked once), %d over the request budget, %d failed in the batch, %d without an answer (never counted as 0)\n",
			s.UnjudgedByCause[judge.CauseUnparseable], s.UnjudgedByCause[judge.CauseOutOfRange], s.UnjudgedByCause[judge.CauseBudget],
			s.UnjudgedByCause[judge.CauseBatchFailed], s.UnjudgedByCause[judge.CauseBatchMissing])
	} else {
		fmt.Fprintf(w, "judge: unjudged answers: %d unparseable, %d out of range (each after one correction retry), %d over the request budget (never counted as 0)\n",
			s.UnjudgedByCause[judge.CauseUnparseable], s.UnjudgedByCause[judge.CauseOutOfRange], s.UnjudgedByCause[judge.CauseBudget])
	}
	fmt.Fprintf(w, "judge: %d request(s) sent (%d retries after a bad answer), %d answer(s) reused (pairs with an identical prompt, asked once), %d cache hit(s)\n",
		res.Requests, res.BadAnswerRetries, res.Reused, res.Cached)
	fmt.Fprintf(w, "judge: tokens: %d prompt, %d completion", res.PromptTokens, res.CompletionTokens)
	if res.ResponsesWithoutUsage > 0 {
		fmt.Fprintf(w, " (%d response(s) without usage not counted)", res.ResponsesWithoutUsage)
	}
	if s.EstimatedCost != nil {
		fmt.Fprintf(w, "; estimated cost %s", format.Significant(*s.EstimatedCost, format.CostDigits))
	}
	fmt.Fprintln(w)
	if b := res.Batch; b != nil {
		id := ""
		if b.BatchID != "" {
			id = " " + format.SanitizeText(b.BatchID)
			if b.Resumed {
				id += " (resumed)"
			}
		}
		fmt.Fprintf(w, "judge: batch (%s, %s)%s%s: %d request(s) submitted, %d answered, %d failed, %d without an answer; %d new judgment(s), %d reused, %d from the cache\n",
			b.Mode, b.Provider, id, statusText(b.Status), b.Submitted, b.Answered, b.Failed, b.Missing, b.New, b.Reused, b.Cached)
		if b.Mode == "api" {
			calls := ""
			if c := b.Calls; c != nil {
				calls = fmt.Sprintf("; %d HTTP call(s) to %s (%d submitting, %d polling, %d downloading)", c.Total(), b.Provider, c.Submit, c.Poll, c.Download)
			}
			fmt.Fprintf(w, "judge: batch wall time %s s, %s new judgment(s) per second%s\n", format.Fixed(b.WaitSeconds, 1), fmtRate(b.PairsPerSecond), calls)
		}
	}
	marked := false
	for _, a := range s.SelfAgreement {
		ci := "undefined"
		if a.CI95 != nil {
			ci = fmt.Sprintf("[%s, %s]%s", fmtFloat(&a.CI95[0]), fmtFloat(&a.CI95[1]), format.MarkIf(a.Unreliable))
			marked = marked || a.Unreliable
		}
		fmt.Fprintf(w, "judge: self-agreement, repeats %d and %d: n %d, exact agreement %s, weighted kappa (quadratic) %s, 95%% CI %s, %d pair(s) differ\n",
			a.Repeats[0], a.Repeats[1], a.N, fmtFloat(a.Agreement), fmtFloat(a.WeightedKappa), ci, a.Differing)
	}
	if marked {
		fmt.Fprintf(w, "judge: %s\n", SelfAgreementUnreliableNote)
	}
}

// SelfAgreementUnreliableNote explains the mark after a self-agreement
// interval: calibrate's kappa interval, marked by the same rule
// (metrics.KappaCI95Context).
const SelfAgreementUnreliableNote = format.UnreliableNote + " (the weighted kappa's BCa interval below 30 pairs, its Wilson-disagreement interval below 50, and either at any n when a repeat used one grade only or a grade fewer than 3 times; docs/statistics.md)"

func fmtFloat(v *float64) string {
	if v == nil {
		return "undefined"
	}
	return format.Full(*v)
}

func statusText(s string) string {
	if s == "" {
		return ""
	}
	return ", " + format.SanitizeText(s)
}

func fmtRate(v *float64) string {
	if v == nil {
		return "undefined"
	}
	return format.Fixed(*v, 1)
}

// HumanSample writes what judge --human-sample drew (per locale, of the
// pool's queries) and where its labelling sheet is.
func HumanSample(w io.Writer, hs *judge.HumanSample, csvPath, jsonlPath string) {
	var strata []string
	for _, st := range hs.Strata {
		loc := st.Locale
		if loc == "" {
			loc = "(no locale)"
		}
		strata = append(strata, fmt.Sprintf("%s %d of %d", format.SanitizeText(loc), st.Drawn, st.Queries))
	}
	fmt.Fprintf(w, "judge: human sample (seed %d): %d of %d queries (%s), %d pairs to label in %s and %s (fill in one: grade 0-3)\n",
		hs.Seed, len(hs.Queries), hs.Pool, strings.Join(strata, ", "), len(hs.Pairs), format.SanitizeText(csvPath), format.SanitizeText(jsonlPath))
}

// Generate writes generate's summary of res: the documents and requests, the
// batch, the fallback to text, the failures, the filters (near duplicates at
// jaccard, the round trip at roundTripK when on) and the cases written to out.
func Generate(w io.Writer, res *generate.RunResult, jaccard float64, roundTripK int, out, batchOut, batchIn string) {
	if res.RequestsOnly {
		fmt.Fprintf(w, "generate: %d document(s), %d request(s) written to %s\n", res.Documents, res.BatchRequests, format.SanitizeText(batchOut))
		return
	}
	if res.BatchMode == "file" {
		fmt.Fprintf(w, "generate: batch (file) %s: %d request(s)\n", format.SanitizeText(batchIn), res.BatchRequests)
	}
	fmt.Fprintf(w, "generate: %d document(s), %d request(s), tokens %d prompt, %d completion\n", res.Documents, res.Requests, res.PromptTokens, res.CompletionTokens)
	if res.BatchID != "" {
		resumed := ""
		if res.BatchResumed {
			resumed = " (resumed)"
		}
		fmt.Fprintf(w, "generate: batch %s%s %s\n", format.SanitizeText(res.BatchID), resumed, format.SanitizeText(res.BatchStatus))
	}
	if res.FellBack {
		fmt.Fprintln(w, "generate: the server rejected response_format json_schema; answers were read as text lines")
	}
	if res.BatchMode != "" {
		// A batch has one turn: no correction retry (issue 33 item 13).
		fmt.Fprintf(w, "generate: %d document(s) without a readable answer (a batch has no correction turn: each was asked once), %d skipped over the request budget\n", res.Failed, res.BudgetSkipped)
	} else {
		fmt.Fprintf(w, "generate: %d document(s) without a readable answer after one retry, %d skipped over the request budget\n", res.Failed, res.BudgetSkipped)
	}
	if res.SecretDropped > 0 { // a line only when it happened: a model that quotes a credential has gone wrong
		fmt.Fprintf(w, "generate: %d query(ies) dropped: they held a secret (the same warning is on standard error)\n", res.SecretDropped)
	}
	fmt.Fprintf(w, "generate: %d near-duplicate query(ies) dropped (token Jaccard ≥ %s)\n", res.NearDuplicates, format.Full(jaccard))
	if roundTripK > 0 {
		fmt.Fprintf(w, "generate: round-trip filter (source card in the top %d of dense, lexical or hybrid): %d query(ies) dropped\n", roundTripK, res.RoundTripDropped)
	}
	fmt.Fprintf(w, "generate: %d case(s) written to %s\n", res.Written, format.SanitizeText(out))
}

// Retrieve is retrieve's line of the job summary: what was retrieved, how,
// and where it was written (out).
func Retrieve(res *retrieve.RunResult, out string) string {
	s := fmt.Sprintf("**retrieval-gate retrieve**: %d cases retrieved from %d chunks of %d cards (strategy %s, store %s, embedder %s, k = %d), written to %s.\n",
		res.Cases, res.Chunks, res.Cards, res.Strategy, res.Store, res.Embedder, res.K, format.EscapeMarkdown(out))
	if c := res.ANN; c != nil {
		s += "\n" + strings.ToUpper(ANNCheck(c)[:1]) + ANNCheck(c)[1:] + ".\n"
		if c.Gate.Status != outcome.Off {
			icon := "✅"
			if c.Gate.Status == outcome.Fail {
				icon = "❌"
			}
			s += "\n" + icon + " " + ANNGate(c.Gate) + ".\n"
		}
	}
	return s
}

// ANNCheck is the exact check's line: "exact check: the store's recall@50
// against exact search 0.982 [0.975, 0.988] (hall-t) over 1000 queries (a
// sample of 100000 by case id), 974 with recall 1; its 100000 vectors read
// back in 100 request(s), 1234567890 bytes". The recall is named by the depth
// it was measured at (gatetable.ANNRecallAt): on a store that holds fewer
// records a query can match than the depth asked, "recall@38 (50 asked; …)".
func ANNCheck(c *retrieve.ANNCheck) string {
	which := fmt.Sprintf("every one of the %d queries", c.Queries)
	if c.Sample != retrieve.ExactAll {
		which = fmt.Sprintf("a sample of %d of the %d queries by case id", min(int64(c.Sample), c.Queries), c.Queries)
	}
	s := "exact check of " + which + ": "
	if c.N == 0 {
		s += "no query had an exact neighbour"
	} else {
		iv := format.Interval([2]float64{c.CI95.Lo, c.CI95.Hi})
		how := fmt.Sprintf("%s, n = %d", c.CI95.Method, c.N)
		if c.Clusters > 0 {
			how = fmt.Sprintf("%s over %s of queries in families, n = %d", c.CI95.Method, format.Count(c.Clusters, "cluster", "clusters"), c.N)
		}
		s += fmt.Sprintf("the store's %s against exact search %s %s (%s), %d of them with recall 1",
			gatetable.ANNRecallAt(int64(c.Depth), [2]int64{int64(c.Measured[0]), int64(c.Measured[1])}), format.Num(c.Recall), iv, how, c.Perfect)
	}
	if c.NoNeighbour > 0 {
		s += fmt.Sprintf("; %d without an exact neighbour (no record of their locale) not counted", c.NoNeighbour)
	}
	x := c.Export
	if x.Requests == 0 {
		return s + fmt.Sprintf("; its %d vectors read back in process", x.Records)
	}
	return s + fmt.Sprintf("; its %d vectors read back in %d request(s), %d bytes", x.Records, x.Requests, x.Bytes)
}

// ANNGate is the --min-ann-recall gate's line: "min_ann_recall 0.95: pass (…reason)".
func ANNGate(g outcome.Gate) string {
	s := fmt.Sprintf("%s %s: %s", g.Name, format.Num(g.Threshold), g.Status)
	if r := gatetable.Reason(g.Why); r != "" {
		s += " (" + r + ")"
	}
	return s
}

// Import writes import's lines to w (standard error: what it read, as what,
// what it wrote to out, relevance clamped) and returns its line of the job
// summary.
func Import(w io.Writer, res *importer.Result, out string) string {
	name, used, st := res.Name, res.Format, res.Stats
	how := "detected"
	if res.Given {
		how = "given"
	}
	fmt.Fprintf(w, "import: read %s as %s (%s: %s)\n", format.SanitizeText(name), used.Name, how, used.Description)
	fmt.Fprintf(w, "import: wrote %d %s to %s\n", st.Records, kindNoun(used.Kind), format.SanitizeText(out))
	clamped := ""
	if st.ClampedLow > 0 || st.ClampedHigh > 0 {
		clamped = fmt.Sprintf("relevance outside %d..%d clamped: %d below set to %d, %d above set to %d",
			importer.MinRelevance, importer.MaxRelevance, st.ClampedLow, importer.MinRelevance, st.ClampedHigh, importer.MaxRelevance)
		fmt.Fprintf(w, "import: %s\n", clamped)
		clamped = " " + strings.ToUpper(clamped[:1]) + clamped[1:] + "."
	}
	written := "standard output"
	if out != "-" {
		written = format.EscapeMarkdown(out)
	}
	return fmt.Sprintf("**retrieval-gate import**: read %s as %s (%s), wrote %d %s to %s.%s\n",
		format.EscapeMarkdown(name), used.Name, how, st.Records, kindNoun(used.Kind), written, clamped)
}

func kindNoun(k importer.Kind) string {
	switch k {
	case importer.KindCases:
		return "cases (cases JSONL, for check)"
	case importer.KindQrels:
		return "judgments (TREC qrels, for compare --qrels)"
	case importer.KindRun:
		return "ranked documents (TREC run, for compare --run)"
	case importer.KindKB:
		return "cards (KB JSONL, for check --kb)"
	}
	return string(k)
}
