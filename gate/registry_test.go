package gate_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// A store and an embedder registered by this test binary alone: Live names
// them as retrieve's flags would, and reaches them through the registries
// with the settings it was given, no line of the library changed.
var registered struct {
	sync.Mutex
	stores   []store.Config
	embedder []embed.Config
}

func init() {
	store.Register(store.Kind{Name: "gate-test-store", Description: "a store of gate's tests", URLEnv: "GATE_TEST_STORE_URL",
		Open: func(_ context.Context, cfg store.Config) (*store.Opened, error) {
			registered.Lock()
			registered.stores = append(registered.stores, cfg)
			registered.Unlock()
			return &store.Opened{Store: memory.New(1)}, nil
		}})
	embed.Register(embed.Kind{Name: "gate-test-embedder", Description: "the hash embedder, seen by gate's tests",
		Check: func(c embed.Config) error {
			if c.Model == "refuse-me" {
				return &embed.SettingError{Setting: "model", Err: errors.New("a refused model")}
			}
			return nil
		},
		New: func(c embed.Config) (embed.Embedder, error) {
			registered.Lock()
			registered.embedder = append(registered.embedder, c)
			registered.Unlock()
			return embed.NewHash(embed.DefaultHashDim, c.Documents), nil
		}})
}

func TestLiveReachesARegisteredStore(t *testing.T) {
	cases, err := os.Open(demo + "/cases.jsonl")
	require.NoError(t, err)
	defer cases.Close()
	rep, err := gate.Live(context.Background(), gate.LiveOptions{KB: demo + "/kb", Cases: cases, Strategy: gate.StrategyDense,
		Store: "gate-test-store", StoreURL: "http://store.test:1", Embedder: "gate-test-embedder", EmbedderModel: "m-1", EmbedderAPIKey: "key-1",
		Check: gate.Options{Floors: []string{"retrieval_recall_at_k=0.8"}}})
	require.NoError(t, err)
	assert.True(t, rep.Passed(), "the hash embedder behind the test's name retrieves as well as hash")
	registered.Lock()
	defer registered.Unlock()
	require.Len(t, registered.stores, 1, "the registered store was opened once")
	assert.Equal(t, "http://store.test:1", registered.stores[0].URL)
	assert.Positive(t, registered.stores[0].Chunks)
	require.Len(t, registered.embedder, 1)
	assert.Equal(t, "m-1", registered.embedder[0].Model)
	assert.Equal(t, "key-1", registered.embedder[0].APIKey)

	// Their refusals are the library's, named by its fields.
	for _, tc := range []struct {
		o      gate.LiveOptions
		option string
		want   string
	}{
		{gate.LiveOptions{Store: "gate-test-store"}, "", "gate: LiveOptions.Store gate-test-store needs LiveOptions.StoreURL or $GATE_TEST_STORE_URL"},
		{gate.LiveOptions{Embedder: "gate-test-embedder", EmbedderModel: "refuse-me"}, "embedder-model", "gate: a refused model"},
		{gate.LiveOptions{Store: "redis"}, "store", "gate: LiveOptions.Store must be chroma, gate-test-store or memory"},
		{gate.LiveOptions{Embedder: "bert"}, "embedder", "gate: LiveOptions.Embedder must be gate-test-embedder, hash, ollama or openai"},
	} {
		_, err := tc.o.Resolve()
		require.EqualError(t, err, tc.want)
		var oe *option.Error
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, tc.option, oe.Option)
	}
}
