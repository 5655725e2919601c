package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Config is what opening a store may use; each store uses what it needs.
type Config struct {
	// URL is the store's server (retrieve's --chroma-url, else the variable
	// named by the Kind's URLEnv); "" for an in-process store.
	URL string
	// Collection is a collection to keep and reuse while its fingerprint
	// matches; "" means a temporary one. Only a Kind with Collections takes it.
	Collection  string
	Fingerprint string // of the KB content, chunking and embedder
	Chunks      int    // records the finished index holds
	MaxIDBytes  int    // the longest chunk id among them (a server's answers are bounded by it)
	// Tenant and Database place the collections on the server ("" the store's
	// defaults); APIKey is the server's token (a secret: sent only to URL's
	// origin, never printed) and TokenHeader the header it travels in ("" the
	// store's default); CreateDatabase creates a missing tenant or database
	// instead of refusing. Only a Kind with KeyEnv takes them.
	Tenant, Database    string
	APIKey, TokenHeader string
	CreateDatabase      bool
}

// SettingError is a setting of Config that a Kind's Check refuses: Setting is
// the flag's name after the store's prefix (tenant, database, api-key,
// token-header), so a caller names it as the user gave it.
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Opened is an open store.
type Opened struct {
	Store Store
	// Ready reports that the store already holds every chunk (a kept collection
	// whose fingerprint matches): the ingest is skipped.
	Ready bool
	// Notice is a line for the log about what was opened ("" when none), and
	// Closed the line after a successful Close (a temporary collection deleted).
	Notice, Closed string
}

// Kind is one registered store: a package calls Register from its init, and
// one blank import (internal/retrieve/stores.go) links it in.
type Kind struct {
	Name        string // the --store value
	Description string // a few words for the flag's help
	// URLEnv names the environment variable read for the server URL when none
	// is given; "" means the store runs in process and takes no URL.
	URLEnv string
	// Collections reports that the store keeps named collections (--collection).
	Collections bool
	// KeyEnv, TenantEnv, DatabaseEnv and TokenHeaderEnv name the variables read
	// for Config's APIKey, Tenant, Database and TokenHeader when no flag gives
	// them; KeyEnv "" means the store takes none of these settings.
	KeyEnv, TenantEnv, DatabaseEnv, TokenHeaderEnv string
	// Check, when set, validates a Config without any request (exit 2 before
	// anything runs); its refusals are *SettingError.
	Check func(cfg Config) error
	Open  func(ctx context.Context, cfg Config) (*Opened, error)
}

var (
	mu       sync.RWMutex
	registry = map[string]Kind{}
)

// Register adds a store kind; a name registered twice panics (two packages
// claiming one --store value is a programming error).
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	if k.Name == "" || k.Open == nil {
		panic("store: Register needs a name and an Open function")
	}
	if _, dup := registry[k.Name]; dup {
		panic("store: registered twice: " + k.Name)
	}
	registry[k.Name] = k
}

// Lookup returns the store kind of that name; an unknown name's error lists
// the registered ones.
func Lookup(name string) (Kind, error) {
	mu.RLock()
	k, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return Kind{}, fmt.Errorf("unknown store %q: must be %s", name, Choices(Names()))
	}
	return k, nil
}

// Kinds lists the registered stores, sorted by name.
func Kinds() []Kind {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names are the registered store names, sorted.
func Names() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

// Choices joins names as a message lists them: "a", "a or b", "a, b or c".
func Choices(names []string) string {
	switch len(names) {
	case 0:
		return "(none registered)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Help is the flag help of the registered stores: "chroma (a Chroma server) or
// memory (in-process exact search)".
func Help() string {
	var parts []string
	for _, k := range Kinds() {
		parts = append(parts, k.Name+" ("+k.Description+")")
	}
	return Choices(parts)
}
