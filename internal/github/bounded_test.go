package github

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// endlessAPI answers every request with a 200 JSON answer that never ends
// (head, then one element after another), counting what it sent.
func endlessAPI(t *testing.T, head, elem string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	chunk := []byte(strings.Repeat(elem, max(1, (32<<10)/len(elem))))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(head))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// Issue 33 item 4: every answer of the GitHub API goes through the bounded
// reader: a comment listing page is refused past 100 comments of the largest
// size, the token's user or a GraphQL answer past 1 MiB, each with an error
// that says so, never read to the end of an endless body.
func TestAnswersBounded(t *testing.T) {
	ctx := context.Background()
	t.Run("comment listing", func(t *testing.T) {
		srv, sent := endlessAPI(t, "[", `{"id":1,"body":"`+strings.Repeat("x", 10000)+`","user":{"login":"a"}},`)
		c, err := NewClient(srv.URL, "octo/repo", "", DefaultPolicy)
		require.NoError(t, err)
		_, err = c.ListComments(ctx, 7)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the answer is longer than 44800 KiB")
		assert.Less(t, sent.Load(), int64(maxListPage+16<<20))
	})
	// Small objects: the values cap comes first (go-github decodes the stream
	// itself; a 92 MB page of check runs took 4.5 GB decoded).
	t.Run("comment listing of small objects", func(t *testing.T) {
		srv, sent := endlessAPI(t, "[", `{"id":1,"body":"x","user":{"login":"a"}},`)
		c, err := NewClient(srv.URL, "octo/repo", "", DefaultPolicy)
		require.NoError(t, err)
		_, err = c.ListComments(ctx, 7)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "holds more than 65,536 values (the cap on what an answer may take in memory)")
		assert.Less(t, sent.Load(), int64(16<<20))
	})
	t.Run("check runs of small objects", func(t *testing.T) {
		srv, sent := endlessAPI(t, `{"total_count":1,"check_runs":[`, `{},`)
		c, err := NewClient(srv.URL, "octo/repo", "", DefaultPolicy)
		require.NoError(t, err)
		_, _, err = c.FindCheckRun(ctx, "abc", "retrieval-gate")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "holds more than 65,536 values")
		assert.Less(t, sent.Load(), int64(16<<20))
	})
	t.Run("the token's user", func(t *testing.T) {
		srv, sent := endlessAPI(t, `{"login":"`, "a")
		c, err := NewClient(srv.URL, "octo/repo", "", DefaultPolicy)
		require.NoError(t, err)
		_, err = c.Self(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the answer is longer than 1 MiB")
		assert.Less(t, sent.Load(), int64(16<<20))
	})
	t.Run("GraphQL", func(t *testing.T) {
		srv, sent := endlessAPI(t, `{"data":{"x":"`, "a")
		c, err := NewClient(srv.URL, "octo/repo", "", DefaultPolicy)
		require.NoError(t, err)
		err = c.MinimizeComment(ctx, "IC_1")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "longer than 1 MiB")
		assert.Less(t, sent.Load(), int64(16<<20))
	})
}

// The listing keeps the body of retrieval-gate's comments only: the others'
// are never edited nor compared, and a pull request full of large comments
// does not add up in memory.
func TestListCommentsKeepsOnlyMarkedBodies(t *testing.T) {
	srv := githubtest.New("octo", "repo", "", 7)
	defer srv.Close()
	srv.AddComment(7, "someone", strings.Repeat("long text ", 1000))
	srv.AddComment(7, ActionsBot, "\n"+format.CommentMarker("default")+"\nthe report")
	c, err := NewClient(srv.APIURL(), "octo/repo", "", DefaultPolicy)
	require.NoError(t, err)
	cs, err := c.ListComments(context.Background(), 7)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Empty(t, cs[0].Body)
	assert.Equal(t, "someone", cs[0].Login)
	assert.Equal(t, "\n"+format.CommentMarker("default")+"\nthe report", cs[1].Body)
}

// The listing reads at most maxPages pages: past them it returns the comments
// read, oldest first, with an *IncompleteError, never silently fewer.
func TestListCommentsStopsExplicitly(t *testing.T) {
	old := maxPages
	maxPages = 2
	defer func() { maxPages = old }()
	for _, tt := range []struct {
		name     string
		comments int
		cut      bool
	}{
		{"the bound's last page ends them", 200, false},
		{"more than the bound", 201, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", "", 7)
			defer srv.Close()
			for i := range tt.comments {
				srv.AddComment(7, "someone", fmt.Sprint("comment ", i))
			}
			c, err := NewClient(srv.APIURL(), "octo/repo", "", DefaultPolicy)
			require.NoError(t, err)
			cs, err := c.ListComments(context.Background(), 7)
			require.Len(t, cs, 200)
			if !tt.cut {
				require.NoError(t, err)
				return
			}
			var ie *IncompleteError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, IncompleteError{Object: "PR comments", Read: 200, Pages: 2, PerPage: 100}, *ie)
			assert.Equal(t, "there are more PR comments than the 200 read (the first 2 pages of 100, oldest first)", err.Error())
		})
	}
}
