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
	os.Exit(run())
}

// run wires SIGINT and SIGTERM to the context the command runs under: the first
// signal cancels it (the command stops, exits 2 and writes nothing); once it has,
// the signals get their default action back, so a second one ends the process at
// once.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	return realMain(ctx)
}

func realMain(ctx context.Context) int {
	return cli.Run(ctx, cli.OSEnv(), os.Args[1:])
}
