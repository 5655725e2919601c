// Command llmfake serves the project's fake OpenAI-compatible chat server
// (internal/llm/llmtest) on 127.0.0.1:8000, so the judge, generate and evaluate
// examples of the docs run without a model server. It grades by a rule (word
// overlap, or a qrels table given with -qrels), not a model. See docs/judge.md.
//
//	go run ./cmd/llmfake [-addr 127.0.0.1:8000] [-qrels FILE -kb PATH -queries FILE]
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
