package retrieve

// A retrieval's options are resolved once, before the run, by one function
// both front ends call: the CLI (retrieve, and evaluate for its retrieve
// stages) with the values of the environment variables it read, the public
// gate.Live with none. Run then takes every setting as a value: it reads no
// environment.

import (
	"errors"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// The defaults of a retrieval's options: what retrieve's flags default to and
// what Resolve gives a zero value.
const (
	DefaultStrategy = Hybrid
	DefaultK        = 10
	DefaultStore    = "memory"
	DefaultEmbedder = "hash"
)

// Env is what a front end read of the process environment for a retrieval:
// the value of each variable of Variables that is set, by name. A library
// caller passes none.
type Env map[string]string

// Variables are the environment variables a retrieval takes a setting from,
// as the registered stores (store.Kind's URLEnv, TenantEnv, DatabaseEnv,
// KeyEnv, TokenHeaderEnv) and embedders (embed.Kind's KeyEnv) name them,
// sorted: what a front end reads into an Env.
func Variables() []string {
	seen := map[string]bool{}
	for _, k := range store.Kinds() {
		for _, v := range []string{k.URLEnv, k.TenantEnv, k.DatabaseEnv, k.KeyEnv, k.TokenHeaderEnv} {
			seen[v] = v != ""
		}
	}
	for _, k := range embed.Kinds() {
		seen[k.KeyEnv] = k.KeyEnv != ""
	}
	var out []string
	for v, ok := range seen {
		if ok {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// Resolve is the one resolution of a retrieval's options, before Run: the
// defaults of the zero values (DefaultStrategy, DefaultK, DefaultStore, or
// chroma when only a store URL is given, DefaultEmbedder), k and the strategy
// checked, then the store and the embedder (ResolveStore). storeSet says the
// store was chosen (its flag given; for a library caller, Store not empty).
// Refusals are *option.Error, named by the CLI's flags.
func (r *RunOptions) Resolve(env Env, storeSet bool) error {
	if r.Strategy == "" {
		r.Strategy = DefaultStrategy
	}
	if r.K == 0 {
		r.K = DefaultK
	}
	if r.K < 1 {
		return option.Refuse("k", "must be at least 1")
	}
	if !slices.Contains(Strategies, r.Strategy) {
		return option.Refuse("strategy", "must be dense, lexical or hybrid")
	}
	if err := r.validateExact(); err != nil {
		return err
	}
	return r.ResolveStore(env, storeSet)
}

// validateExact checks the exact check's options: N ≥ 1 or ExactAll, a
// strategy that queries a store, a floor in [0, 1] only with the check.
func (r *RunOptions) validateExact() error {
	switch {
	case r.ExactCheck < ExactAll:
		return option.Refuse("exact-check", "must be a number of queries (at least 1) or all")
	case r.ExactCheck != 0 && r.Strategy == Lexical:
		return option.Conflict(option.Name("exact-check"), " checks the vector store's answers, which ", option.Quoted("strategy", Lexical), " does not use (dense or hybrid)")
	case r.MinANNRecallSet && (r.MinANNRecall < 0 || r.MinANNRecall > 1 || math.IsNaN(r.MinANNRecall)):
		return option.Refuse("min-ann-recall", "must be in [0,1]")
	case r.MinANNRecallSet && r.ExactCheck == 0:
		return option.Conflict(option.Name("min-ann-recall"), " gates the exact check: give ", option.Name("exact-check"), " (N queries or all)")
	}
	return nil
}

// ResolveStore resolves the store and the embedder of a retrieval (retrieve's,
// and evaluate's for its retrieve stages) against the registries: a known
// embedder (DefaultEmbedder when none is named); a store URL implying the
// store chroma unless a store with a server is named; a known store (DefaultStore when none is named); a collection
// only for a store that keeps collections and the server settings only for a
// store that takes them; each server setting left empty taken from the
// variable the store names in env (a flag wins over its variable), the URL
// required of a store with a server; the store's Check; the embedder's key
// from its variable, and its Check. Every value read from env is noted in
// FromEnv.
func (r *RunOptions) ResolveStore(env Env, storeSet bool) error {
	if r.Embedder == "" {
		r.Embedder = DefaultEmbedder
	}
	ek, err := embed.Lookup(r.Embedder)
	if err != nil {
		return option.Refuse("embedder", "must be "+store.Choices(embed.Names()))
	}
	if r.StoreURL != "" {
		// The URL is chroma's when no store is named; a store named must be
		// one with a server.
		if k, err := store.Lookup(r.Store); storeSet && r.Store != "chroma" && (err != nil || k.URLEnv == "") {
			return option.Conflict(option.Name("chroma-url"), " implies --store chroma, but ", option.Quoted("store", r.Store))
		}
		if !storeSet {
			r.Store = "chroma"
		}
	}
	if r.Store == "" {
		r.Store = DefaultStore
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
	// Each setting left empty from its variable.
	fill := func(v *string, opt, variable string) {
		if *v != "" || variable == "" {
			return
		}
		if val := strings.TrimSpace(env[variable]); val != "" {
			*v = val
			if r.FromEnv == nil {
				r.FromEnv = map[string]string{}
			}
			r.FromEnv[opt] = variable
		}
	}
	fill(&r.StoreURL, "chroma-url", kind.URLEnv)
	if kind.URLEnv != "" && r.StoreURL == "" {
		return option.Conflict(option.Name("store"), " "+r.Store+" needs ", option.Name("chroma-url"), " or $"+kind.URLEnv)
	}
	if kind.KeyEnv != "" {
		fill(&r.StoreTenant, "chroma-tenant", kind.TenantEnv)
		fill(&r.StoreDatabase, "chroma-database", kind.DatabaseEnv)
		fill(&r.StoreAPIKey, "chroma-api-key", kind.KeyEnv)
		fill(&r.StoreTokenHeader, "chroma-token-header", kind.TokenHeaderEnv)
	}
	if kind.Check != nil {
		var se *store.SettingError
		if err := kind.Check(r.StoreConfig(kind)); errors.As(err, &se) {
			// Named as given: the flag (or input), else its variable. The
			// message never holds the key.
			opt := "chroma-" + se.Setting
			ref := option.Name(opt)
			ref.Env = r.FromEnv[opt]
			return option.Conflict(ref, ": "+se.Err.Error())
		} else if err != nil {
			return option.Conflict(err.Error())
		}
	}
	fill(&r.EmbedderAPIKey, "embedder-api-key", ek.KeyEnv)
	if ek.Check != nil {
		if err := ek.Check(r.embedConfig(nil)); err != nil {
			return embedderError(err)
		}
	}
	return nil
}

// StoreConfig is the store.Config of r's store settings for kind (the server
// settings only for a kind that takes them). Chunks and Fingerprint are left
// to the caller.
func (r *RunOptions) StoreConfig(kind store.Kind) store.Config {
	cfg := store.Config{URL: r.StoreURL, Collection: r.Collection}
	if kind.KeyEnv != "" {
		cfg.Tenant, cfg.Database = r.StoreTenant, r.StoreDatabase
		cfg.APIKey, cfg.TokenHeader = r.StoreAPIKey, r.StoreTokenHeader
		cfg.CreateDatabase = r.CreateDatabase
	}
	return cfg
}

// embedConfig is the embed.Config of r's embedder settings.
func (r *RunOptions) embedConfig(documents []string) embed.Config {
	return embed.Config{URL: r.EmbedderURL, Model: r.EmbedderModel, APIKey: r.EmbedderAPIKey, Documents: documents}
}

// embedderError is an embedder's refusal of a setting as an *option.Error
// naming its option (embedder-url, embedder-model).
func embedderError(err error) error {
	if se := (*embed.SettingError)(nil); errors.As(err, &se) {
		return optionError("embedder-"+se.Setting, se.Err)
	}
	return err
}
