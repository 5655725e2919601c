package retrieve

import (
	"errors"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// Validate checks a retrieve run's options before any work: k, the strategy,
// then the store and embedder (ValidateStore).
func (r *RunOptions) Validate(getenv func(string) string, storeSet bool) error {
	if r.K < 1 {
		return option.Refuse("k", "must be at least 1")
	}
	if !slices.Contains(Strategies, r.Strategy) {
		return option.Refuse("strategy", "must be dense, lexical or hybrid")
	}
	return r.ValidateStore(getenv, storeSet)
}

// ValidateStore checks the store and embedder of a retrieval (retrieve's, and
// evaluate's for its retrieve stages) against the registries: a known name, a
// store URL implying the store chroma (storeSet says the store was given), the
// store's URL (else its variable, read through getenv), a collection only for
// a store that keeps collections, the server settings only for a store that
// takes them, and the store's own Check. It sets Store and StoreURL as implied.
func (r *RunOptions) ValidateStore(getenv func(string) string, storeSet bool) error {
	if _, err := embed.Lookup(r.Embedder); err != nil {
		return option.Refuse("embedder", "must be "+store.Choices(embed.Names()))
	}
	if r.StoreURL != "" {
		if storeSet && r.Store != "chroma" {
			return option.Conflict(option.Name("chroma-url"), " implies --store chroma, but ", option.Quoted("store", r.Store))
		}
		r.Store = "chroma"
	}
	kind, err := store.Lookup(r.Store)
	if err != nil {
		return option.Refuse("store", "must be "+store.Choices(store.Names()))
	}
	if r.Collection != "" && !kind.Collections {
		return option.Conflict(option.Name("collection"), " needs --store chroma")
	}
	if kind.KeyEnv == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"chroma-tenant", r.StoreTenant != ""}, {"chroma-database", r.StoreDatabase != ""}, {"chroma-api-key", r.StoreAPIKey != ""},
			{"chroma-token-header", r.StoreTokenHeader != ""}, {"chroma-create-database", r.CreateDatabase}} {
			if f.set {
				return option.Conflict(option.Name(f.name), " needs --store chroma")
			}
		}
	}
	if kind.URLEnv != "" && r.StoreURL == "" {
		if r.StoreURL = getenv(kind.URLEnv); r.StoreURL == "" {
			return option.Conflict(option.Name("store"), " "+r.Store+" needs ", option.Name("chroma-url"), " or $"+kind.URLEnv)
		}
	}
	if kind.Check == nil {
		return nil
	}
	var se *store.SettingError
	if err := kind.Check(r.StoreConfig(kind, getenv)); errors.As(err, &se) {
		// Named as given: the flag (or input), else its variable. The message
		// never holds the key.
		ref := option.Name("chroma-" + se.Setting)
		if v := map[string]string{"tenant": kind.TenantEnv, "database": kind.DatabaseEnv, "api-key": kind.KeyEnv, "token-header": kind.TokenHeaderEnv}[se.Setting]; v != "" && getenv(v) != "" {
			ref.Env = v
		}
		return option.Conflict(ref, ": "+se.Err.Error())
	} else if err != nil {
		return option.Conflict(err.Error())
	}
	return nil
}
