package llmtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ServeMain is cmd/llmfake: the fake chat server as a standalone process, so the
// docs' judge, generate and evaluate examples run offline:
//
//	llmfake [-addr 127.0.0.1:0] [-kb PATH -queries FILE -qrels FILE] [-key K] [-delay D]
//
// It grades by a rule, not a model: without -qrels a (query, document) pair gets
// Overlap's grade (the share of the query's words of 4+ letters found in the
// document), with -qrels the grade of that table; the generator writes queries
// from the document's own words; POST /rerank is an offline reranker speaking
// TEI's protocol (rerank.go: RerankScore). By default it listens on a free port
// of 127.0.0.1 (port 0), so it never fails because a port is taken. It prints
// the URL to use, alone on the first line of stdout, once it listens, then
// serves until ctx is done (main cancels it on SIGINT or SIGTERM) and returns
// within a second: 0, or 2 for bad flags or an address it cannot listen on.
func ServeMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmfake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (host:port; port 0, the default, picks a free one)")
	kb := fs.String("kb", "", "knowledge base of the -qrels table's documents")
	queries := fs.String("queries", "", "query texts of the -qrels table (cases JSONL or TSV qid<TAB>query)")
	qrels := fs.String("qrels", "", "grade by this TREC qrels table (qid 0 docid rel) instead of word overlap")
	var opt Options
	fs.StringVar(&opt.APIKey, "key", "", "the only bearer token accepted (empty: any)")
	fs.DurationVar(&opt.Delay, "delay", 0, "time taken by each answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llmfake: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *qrels != "" {
		g, err := hiddenTable(*kb, *queries, *qrels)
		if err != nil {
			fmt.Fprintf(stderr, "llmfake: %v\n", err)
			return 2
		}
		opt.Grades = g
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "llmfake: %v\n", err)
		return 2
	}
	grades := "word overlap of the query with the document (3 all, 2 half or more, 1 some, 0 none of its words of 4+ letters)"
	if opt.Grades != nil {
		grades = "the table " + *qrels + " (pairs not in it: 0)"
	}
	fmt.Fprintf(stderr, "llmfake: a fake OpenAI-compatible chat server: it grades by a rule, not a model (%s), "+
		"and writes queries from a document's own words; /rerank reranks by the share of the query's words in each text (TEI's protocol), not a cross-encoder; stop it with Ctrl-C\n", grades)
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	if err := serve(ctx, ln, newServer(opt)); err != nil {
		fmt.Fprintf(stderr, "llmfake: %v\n", err)
		return 2
	}
	return 0
}

// serve answers on ln until ctx is done, then stops: requests in flight get
// shutdownGrace to finish, and the connections are closed after it.
func serve(ctx context.Context, ln net.Listener, s *Server) error {
	hs := &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			_ = hs.Close()
		}
	}()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

// shutdownGrace is how long requests in flight may take after a signal, a small
// part of the one second every command has to stop (the rest is the process's
// own exit, slow under -race on a loaded machine).
const shutdownGrace = 100 * time.Millisecond
