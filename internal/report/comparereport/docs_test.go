package comparereport

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// jsonNames adds the JSON keys of the structs reachable from t to names.
func jsonNames(t reflect.Type, names map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name != "" {
			names[name] = true
		}
		jsonNames(f.Type, names, seen)
	}
}

// docs/compare.md's description of the --json report names keys the
// document has: its example decodes into a Document with no unknown key, and
// every snake_case key its Reports paragraph names is a key of the document
// (or a measure's).
func TestCompareDocsNameTheDocumentsKeys(t *testing.T) {
	data, err := os.ReadFile("../../../docs/compare.md")
	require.NoError(t, err)
	doc := string(data)
	example := regexp.MustCompile("(?s)```json\n(\\{\"schema\": \"retrieval-gate/compare@1\".*?)```").FindStringSubmatch(doc)
	require.NotNil(t, example, "docs/compare.md shows the JSON report")
	dec := json.NewDecoder(bytes.NewReader([]byte(example[1])))
	dec.DisallowUnknownFields()
	var d Document
	require.NoError(t, dec.Decode(&d), "docs/compare.md's example JSON")

	start := strings.Index(doc, "- **`--json`** (`retrieval-gate/compare@1`)")
	require.GreaterOrEqual(t, start, 0, "docs/compare.md's Reports list the --json report")
	para := doc[start:]
	para = para[:strings.Index(para, "\n- **")]
	names := map[string]bool{}
	jsonNames(reflect.TypeFor[Document](), names, map[reflect.Type]bool{})
	for _, k := range metrics.GradedKeys { // the keys of metrics, paired, …
		names[k] = true
	}
	n := 0
	for _, span := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(para, -1) {
		for _, w := range regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`).FindAllString(span[1], -1) {
			n++
			assert.True(t, names[w], "docs/compare.md names the key %q, which the compare document does not have", w)
		}
	}
	assert.Greater(t, n, 20, "the paragraph names the keys")
}
