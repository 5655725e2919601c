package chroma

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

func randomRecords(seed uint64, n, dim int) []store.Record {
	r := rand.New(rand.NewPCG(seed, 7))
	locales := []string{"en", "es-419", "pt-BR"}
	recs := make([]store.Record, n)
	for i := range recs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		recs[i] = store.Record{ID: fmt.Sprintf("card%d#c1", i), ParentID: fmt.Sprintf("card%d", i), Locale: locales[i%3], Text: fmt.Sprint("text ", i), Vector: v}
	}
	return recs
}

func TestTemporaryCollectionAgreesWithMemoryAndIsDeleted(t *testing.T) {
	url := chromatest.URL(t)
	ctx := context.Background()
	recs := randomRecords(1, 600, 32)
	s, ready, err := Open(ctx, Config{URL: url, Fingerprint: "fp", Chunks: len(recs), BatchSize: 128})
	require.NoError(t, err)
	assert.False(t, ready)
	assert.True(t, s.Temporary())
	require.Contains(t, chromatest.Collections(t, url), s.Collection())
	require.NoError(t, s.Add(ctx, recs))

	mem := memory.New(2)
	require.NoError(t, mem.Add(ctx, recs))
	var qs []store.Query
	for i := 0; i < 20; i++ {
		q := store.Query{Vector: randomRecords(uint64(100+i), 1, 32)[0].Vector}
		if i%2 == 0 {
			q.Locale = []string{"en", "es-419", "pt-BR"}[i%3]
		}
		qs = append(qs, q)
	}
	want, err := mem.Search(ctx, qs, 5)
	require.NoError(t, err)
	got, err := s.Search(ctx, qs, 5)
	require.NoError(t, err)
	for i := range qs {
		require.NotEmpty(t, got[i])
		// HNSW is approximate, but on 600 vectors the top hit is exact.
		assert.Equal(t, want[i][0].ID, got[i][0].ID, "query %d", i)
		assert.InDelta(t, want[i][0].Score, got[i][0].Score, 1e-3)
		for _, h := range got[i] {
			if qs[i].Locale != "" {
				assert.Contains(t, h.ID, "#c1")
			}
		}
	}
	require.NoError(t, s.Close(ctx))
	assert.NotContains(t, chromatest.Collections(t, url), s.Collection())
}

func TestTemporaryCollectionDeletedAfterCancel(t *testing.T) {
	url := chromatest.URL(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, _, err := Open(ctx, Config{URL: url, Fingerprint: "fp", Chunks: 10})
	require.NoError(t, err)
	cancel() // Ctrl-C during ingest
	err = s.Add(ctx, randomRecords(2, 10, 8))
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close(ctx))
	assert.NotContains(t, chromatest.Collections(t, url), s.Collection())
}

func TestNamedCollectionReusedThenRebuilt(t *testing.T) {
	url := chromatest.URL(t)
	ctx := context.Background()
	name := "retrieval-gate-test-" + randomHex(4)
	recs := randomRecords(3, 50, 8)
	open := func(fp string) (*Store, bool) {
		s, ready, err := Open(ctx, Config{URL: url, Collection: name, Fingerprint: fp, Chunks: len(recs)})
		require.NoError(t, err)
		assert.False(t, s.Temporary())
		return s, ready
	}
	s, ready := open("fp-1")
	assert.False(t, ready, "new collection")
	require.NoError(t, s.Add(ctx, recs))
	require.NoError(t, s.Close(ctx))
	assert.Contains(t, chromatest.Collections(t, url), name, "a named collection is kept")

	s, ready = open("fp-1")
	assert.True(t, ready, "same fingerprint: reused")
	got, err := s.Search(ctx, []store.Query{{Vector: recs[7].Vector}}, 1)
	require.NoError(t, err)
	assert.Equal(t, recs[7].ID, got[0][0].ID)
	require.NoError(t, s.Close(ctx))

	s, ready = open("fp-2")
	assert.False(t, ready, "changed fingerprint: rebuilt")
	n, err := s.client.count(ctx, s.col.ID)
	require.NoError(t, err)
	assert.Zero(t, n, "the stale collection was dropped")
	require.NoError(t, s.Add(ctx, recs[:10]))
	require.NoError(t, s.Close(ctx))

	s, ready = open("fp-2")
	assert.False(t, ready, "incomplete ingest (10 of 50 chunks): rebuilt")
	require.NoError(t, s.client.deleteCollection(ctx, name))
	require.NoError(t, s.Close(ctx))
}

func TestDeadServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	start := time.Now()
	_, _, err = Open(context.Background(), Config{URL: url})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chroma server at "+url+" is not reachable")
	assert.Less(t, time.Since(start), 12*time.Second)
}

// On the real server: a tenant and database other than the defaults, created by
// the store only when asked (CreateDatabase), refused by name otherwise; the
// collection lives there and not in the default database. The local server has
// no authentication: a token sent to it is ignored, which the run shows too.
func TestTenantAndDatabaseOnRealServer(t *testing.T) {
	url := chromatest.URL(t)
	ctx := context.Background()
	tenant, db := "rg-tenant-"+randomHex(4), "rg-db-"+randomHex(4)
	_, _, err := Open(ctx, Config{URL: url, Tenant: tenant, Database: db, Collection: "kept", Fingerprint: "fp", Chunks: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("chroma tenant %q does not exist at %s", tenant, url))

	recs := randomRecords(3, 50, 8)
	s, ready, err := Open(ctx, Config{URL: url, Tenant: tenant, Database: db, CreateDatabase: true, APIKey: "ignored-token-1234", Collection: "kept", Fingerprint: "fp", Chunks: len(recs)})
	require.NoError(t, err)
	assert.False(t, ready)
	assert.True(t, s.Created)
	require.NoError(t, s.Add(ctx, recs))
	hits, err := s.Search(ctx, []store.Query{{Vector: recs[7].Vector}}, 1)
	require.NoError(t, err)
	assert.Equal(t, recs[7].ID, hits[0][0].ID)
	require.NoError(t, s.Close(ctx))
	assert.NotContains(t, chromatest.Collections(t, url), "kept", "not in the default database")

	// The database exists now: reopened without CreateDatabase, the kept
	// collection is found and reused.
	s, ready, err = Open(ctx, Config{URL: url, Tenant: tenant, Database: db, Collection: "kept", Fingerprint: "fp", Chunks: len(recs)})
	require.NoError(t, err)
	assert.True(t, ready)
	assert.False(t, s.Created)
	require.NoError(t, s.client.deleteCollection(ctx, "kept"))

	// A missing database of an existing tenant is refused by name.
	_, _, err = Open(ctx, Config{URL: url, Tenant: tenant, Database: "rg-missing", Fingerprint: "fp", Chunks: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("chroma database %q of tenant %q does not exist at %s: create it, or pass --chroma-create-database", "rg-missing", tenant, url))
}

// Export reads every record back, page by page, with the vector the server
// holds (float32, as sent) and its locale: what the exact check searches.
func TestExportReadsEveryRecord(t *testing.T) {
	url := chromatest.URL(t)
	ctx := context.Background()
	recs := randomRecords(3, 2*ExportPage+17, 8)
	s, _, err := Open(ctx, Config{URL: url, Fingerprint: "fp", Chunks: len(recs)})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(ctx)) }()
	require.NoError(t, s.Add(ctx, recs))
	got := map[string]store.Record{}
	pages := 0
	cost, err := s.Export(ctx, 8, func(page []store.Record) error {
		pages++
		for _, r := range page {
			r.Vector = append([]float32(nil), r.Vector...)
			got[r.ID] = r
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, pages)
	assert.Equal(t, len(recs), cost.Records)
	assert.Equal(t, 3, cost.Requests)
	assert.Greater(t, cost.Bytes, int64(len(recs)*8*8), "at least 8 bytes a float")
	require.Len(t, got, len(recs))
	for _, r := range recs {
		g := got[r.ID]
		assert.Equal(t, r.Locale, g.Locale, r.ID)
		// As sent, up to the last bit of a float32 (the server's parsing of
		// the JSON number): within one part in a million.
		require.Len(t, g.Vector, len(r.Vector))
		for j := range r.Vector {
			assert.InEpsilon(t, r.Vector[j], g.Vector[j], 1e-6, "%s[%d]", r.ID, j)
		}
	}
	_, err = s.Export(ctx, 9, func([]store.Record) error { return nil })
	require.ErrorContains(t, err, "has dimension 8, the queries 9")
}
