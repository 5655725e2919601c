// Command llmfake serves the project's fake OpenAI-compatible chat server
// (internal/llm/llmtest) on a free port of 127.0.0.1, whose URL it prints on
// stdout, so the judge, generate and evaluate examples of the docs run without a
// model server; its /rerank is an offline reranker (TEI's protocol) for
// --rerank-url. It grades and reranks by a rule (word overlap, or a qrels table
// given with -qrels), not a model. See docs/judge.md.
//
//	llmfake [-addr 127.0.0.1:0] [-qrels FILE -kb PATH -queries FILE]
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := llmtest.ServeMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
