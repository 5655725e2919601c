// Command retrieval-gate measures and gates the retrieval step of a RAG system.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/retrieval-gate/retrieval-gate/internal/cli"
)

func main() {
	ctx, done := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx)
	done()
	os.Exit(code)
}

func realMain(ctx context.Context) int {
	return cli.Run(ctx, cli.OSEnv(), os.Args[1:])
}
