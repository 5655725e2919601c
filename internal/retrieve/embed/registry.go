package embed

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Config is what building an embedder may use; each embedder uses what it needs.
type Config struct {
	URL, Model string
	// APIKey is the server's key (a secret), as the front end resolved it
	// (the variable the Kind's KeyEnv names, when the caller read it).
	APIKey string
	// Documents are the texts of the chunks to index (the hash embedder's
	// vocabulary and IDF).
	Documents []string
}

// SettingError is an embedder refusing one setting of its Config: Setting is
// "url" or "model", so a caller names its own flag for it.
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Kind is one registered embedder: a file of this package (or another package,
// linked in by a blank import in internal/retrieve/stores.go) calls Register
// from its init.
type Kind struct {
	Name        string // the --embedder value
	Description string // a few words for the flag's help
	// KeyEnv names the environment variable a front end reads for Config's
	// APIKey ("" the embedder takes no key).
	KeyEnv string
	// Check, when set, refuses a Config before any request or work (what New
	// would refuse), as a *SettingError.
	Check func(Config) error
	New   func(Config) (Embedder, error)
}

var (
	mu       sync.RWMutex
	registry = map[string]Kind{}
)

// Register adds an embedder kind; a name registered twice panics.
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	if k.Name == "" || k.New == nil {
		panic("embed: Register needs a name and a New function")
	}
	if _, dup := registry[k.Name]; dup {
		panic("embed: registered twice: " + k.Name)
	}
	registry[k.Name] = k
}

// Lookup returns the embedder kind of that name; an unknown name's error lists
// the registered ones.
func Lookup(name string) (Kind, error) {
	mu.RLock()
	k, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return Kind{}, fmt.Errorf("unknown embedder %q: must be %s", name, choices(Names()))
	}
	return k, nil
}

// Kinds lists the registered embedders, sorted by name.
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

// Names are the registered embedder names, sorted.
func Names() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

// Help is the flag help of the registered embedders.
func Help() string {
	var parts []string
	for _, k := range Kinds() {
		parts = append(parts, k.Name+" ("+k.Description+")")
	}
	return choices(parts)
}

func choices(names []string) string {
	switch len(names) {
	case 0:
		return "(none registered)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// OpenAIURL is the openai embedder's server when no URL is given.
const OpenAIURL = "https://api.openai.com/v1"

func init() {
	Register(Kind{Name: "hash", Description: "built-in, lexical", New: func(c Config) (Embedder, error) {
		return NewHash(DefaultHashDim, c.Documents), nil
	}})
	newOpenAI := func(c Config) (Embedder, error) {
		url := c.URL
		if url == "" {
			url = OpenAIURL
		}
		if strings.Contains(url, "api.openai.com") && c.Model == "" {
			return nil, &SettingError{Setting: "model", Err: fmt.Errorf("the openai embedder against api.openai.com needs --embedder-model (e.g. text-embedding-3-small)")}
		}
		e, err := NewOpenAI(OpenAIConfig{URL: url, Model: c.Model, APIKey: c.APIKey})
		if err != nil {
			return nil, &SettingError{Setting: "url", Err: err}
		}
		return e, nil
	}
	Register(Kind{Name: "openai", Description: "any OpenAI-compatible /v1/embeddings", KeyEnv: "OPENAI_API_KEY",
		Check: func(c Config) error { _, err := newOpenAI(c); return err }, New: newOpenAI})
	newOllama := func(c Config) (Embedder, error) {
		e, err := NewOllama(OllamaConfig{URL: c.URL, Model: c.Model})
		if err != nil {
			return nil, &SettingError{Setting: "model", Err: err} // its refusals name their flag
		}
		return e, nil
	}
	Register(Kind{Name: "ollama", Description: "Ollama's /api/embed", Check: func(c Config) error { _, err := newOllama(c); return err }, New: newOllama})
}
