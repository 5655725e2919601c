package casefile

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

func parseOne(t *testing.T, line string) (*Case, error) {
	t.Helper()
	var p CaseParser
	c := new(Case)
	err := p.Parse([]byte(line), "cases.jsonl", 7, c)
	return c, err
}

func TestParseCaseValid(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Case
	}{
		{
			name: "contract example",
			line: `{"id": "en-golden-001", "locale": "en", "type": "golden", "query": "How do I reset my password?",
 "must_cite_one_of": ["en-reset-password", "en-two-factor"],
 "retrieved": [{"id": "en-reset-password#c1", "parent_id": "en-reset-password", "score": 0.83},
               "en-two-factor"]}`,
			want: Case{ID: "en-golden-001", Locale: "en", Type: "golden", Query: "How do I reset my password?",
				Gold: []string{"en-reset-password", "en-two-factor"},
				Retrieved: []Retrieved{
					{ID: "en-reset-password#c1", ParentID: "en-reset-password", Score: 0.83, HasScore: true},
					{ID: "en-two-factor"},
				}, HasRetrieved: true},
		},
		{
			name: "type missing is golden, empty gold is no gold",
			line: `{"id":"a","must_cite_one_of":[],"retrieved":[]}`,
			want: Case{ID: "a", Type: "golden", HasRetrieved: true},
		},
		{
			name: "nulls mean absent",
			line: `{"id":"a","locale":null,"type":null,"query":null,"must_cite_one_of":null,"retrieved":null,"scores":null}`,
			want: Case{ID: "a", Type: "golden"},
		},
		{
			name: "an empty gold id is kept for the integrity gate",
			line: `{"id":"a","must_cite_one_of":["","x"]}`,
			want: Case{ID: "a", Type: "golden", Gold: []string{"", "x"}},
		},
		{
			name: "relevant_ids beside the gold, empty ids kept for the integrity gate",
			line: `{"id":"a","relevant_ids":["r1","","g"],"must_cite_one_of":["g"]}`,
			want: Case{ID: "a", Type: "golden", Gold: []string{"g"}, Relevant: []string{"r1", "", "g"}},
		},
		{
			name: "null and empty relevant_ids are none",
			line: `{"id":"a","relevant_ids":null,"x":{"relevant_ids":[1]}}`,
			want: Case{ID: "a", Type: "golden", Unknown: []string{"x"}},
		},
		{
			name: "empty type is golden, other types are kept",
			line: `{"id":"a","type":""}`,
			want: Case{ID: "a", Type: "golden"},
		},
		{
			name: "adversarial",
			line: `{"id":"a","type":"adversarial"}`,
			want: Case{ID: "a", Type: "adversarial"},
		},
		{
			name: "custom type",
			line: `{"id":"a","type":"multi-hop"}`,
			want: Case{ID: "a", Type: "multi-hop"},
		},
		{
			name: "a cluster key (issue 34: queries in families); null is none",
			line: `{"id":"a","cluster":"en-reset-password","query":"q"}`,
			want: Case{ID: "a", Type: "golden", Query: "q", Cluster: "en-reset-password"},
		},
		{
			name: "null cluster",
			line: `{"id":"a","cluster":null}`,
			want: Case{ID: "a", Type: "golden"},
		},
		{
			name: "parent_id identities, null and empty parent, text skipped, unknown members",
			line: `{"id":"q","retrieved":[{"id":"c#1","parent_id":"c","text":"long \"text\" \u00e9","meta":{"a":[1,{"b":null}]}},` +
				`{"id":"d#2","parent_id":null,"score":null},{"id":"e","parent_id":""},{"text":"x","id":"f#0","score":-1.5e2,"parent_id":"f"}]}`,
			want: Case{ID: "q", Type: "golden", HasRetrieved: true, Retrieved: []Retrieved{
				{ID: "c#1", ParentID: "c"}, {ID: "d#2"}, {ID: "e"}, {ID: "f#0", ParentID: "f", Score: -150, HasScore: true},
			}},
		},
		{
			name: "scores object",
			line: `{"id":"s","locale":"pt-BR","must_cite_one_of":["g"],"scores":{"retrieval_hit_at_k":1.0,"retrieval_recall_at_k":0.5,"retrieval_ndcg_at_k":null,"custom":3e-1}}`,
			want: Case{ID: "s", Locale: "pt-BR", Type: "golden", Gold: []string{"g"},
				Scores: map[string]float64{"retrieval_hit_at_k": 1, "retrieval_recall_at_k": 0.5, "custom": 0.3}},
		},
		{
			name: "empty scores object",
			line: `{"id":"s","scores":{}}`,
			want: Case{ID: "s", Type: "golden", Scores: map[string]float64{}},
		},
		{
			name: "escapes and unicode",
			line: `{"id":"\u0065n-\"q\"\\\/\t","query":"¿Cómo? \ud83d\ude00 \ud800x","must_cite_one_of":["\u00e9t\u00E9"]}`,
			want: Case{ID: "en-\"q\"\\/\t", Type: "golden", Query: "¿Cómo? 😀 \uFFFDx", Gold: []string{"été"}},
		},
		{
			name: "escaped keys",
			line: `{"\u0069d":"x","must_cite_one_of":["g"],"\u0072etrieved":["g"]}`,
			want: Case{ID: "x", Type: "golden", Gold: []string{"g"}, HasRetrieved: true, Retrieved: []Retrieved{{ID: "g"}}},
		},
		{
			name: "scores and null retrieved are fine together",
			line: `{"id":"a","retrieved":null,"scores":{"x":1}}`,
			want: Case{ID: "a", Type: "golden", Scores: map[string]float64{"x": 1}},
		},
		{
			name: "numbers in any form",
			line: `{"id":"n","retrieved":[{"id":"a","score":0},{"id":"b","score":-0.0},{"id":"c","score":1E+2},{"id":"d","score":12345678901234567890},{"id":"e","score":1e-400}],"x":[-0,1.5e-7,true,false,null]}`,
			want: Case{ID: "n", Type: "golden", HasRetrieved: true, Retrieved: []Retrieved{
				{ID: "a", HasScore: true}, {ID: "b", Score: 0, HasScore: true}, {ID: "c", Score: 100, HasScore: true},
				{ID: "d", Score: 12345678901234567890, HasScore: true}, {ID: "e", Score: 0, HasScore: true},
			}, Unknown: []string{"x"}},
		},
		{
			name: "unknown top-level keys, escaped ones unescaped, nested and provenance ones not",
			line: `{"id":"u","must_cite_one_off":["g"],"\u0075ser_input":"q","retrieval":{"k":1},"retrieved":[{"id":"g","rank":1}]}`,
			want: Case{ID: "u", Type: "golden", HasRetrieved: true, Retrieved: []Retrieved{{ID: "g"}},
				Unknown: []string{"must_cite_one_off", "user_input"}},
		},
		{
			name: "whitespace everywhere",
			line: " \t{ \"id\" : \"w\" , \"retrieved\" : [ \"a\" , { \"id\" : \"b\" } ] }\r ",
			want: Case{ID: "w", Type: "golden", HasRetrieved: true, Retrieved: []Retrieved{{ID: "a"}, {ID: "b"}}},
		},
		{
			name: "invalid UTF-8 becomes U+FFFD",
			line: "{\"id\":\"a\xffb\",\"must_cite_one_of\":[\"\xc3\"]}",
			want: Case{ID: "a\uFFFDb", Type: "golden", Gold: []string{"\uFFFD"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseOne(t, tt.line)
			require.NoError(t, err)
			tt.want.File, tt.want.Line, tt.want.Raw = "cases.jsonl", 7, []byte(tt.line)
			if len(tt.want.Gold) == 0 {
				assert.Empty(t, c.Gold)
				c.Gold = tt.want.Gold
			}
			if len(tt.want.Relevant) == 0 {
				assert.Empty(t, c.Relevant)
				c.Relevant = tt.want.Relevant
			}
			if len(tt.want.Retrieved) == 0 {
				assert.Empty(t, c.Retrieved)
				c.Retrieved = tt.want.Retrieved
			}
			assert.Equal(t, tt.want, *c)

			// The reference decoder agrees.
			ref, msg, malformed := refParse([]byte(tt.line))
			require.False(t, malformed)
			require.Empty(t, msg)
			assert.True(t, sameRef(ref, toRef(c)), "reference %+v", ref)
		})
	}
}

func TestRetrievedIdentity(t *testing.T) {
	assert.Equal(t, "card", Retrieved{ID: "card#c2", ParentID: "card"}.Identity())
	assert.Equal(t, "card#c2", Retrieved{ID: "card#c2"}.Identity())
}

func TestParseCaseErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"ragas record", `{"user_input":"q","retrieved_context_ids":["a"],"reference_context_ids":["a"]}`,
			"case has no \"id\" (it looks like a ragas record: convert the file with `retrieval-gate import --format ragas`)"},
		{"empty line", ``, `malformed JSON: unexpected end of line looking for a case object at column 1`},
		{"truncated", `{"id":"a"`, `malformed JSON: unexpected end of line after object value at column 10`},
		{"truncated string", `{"id":"a`, `malformed JSON: unexpected end of line in string at column 9`},
		{"trailing comma", `{"id":"a",}`, `malformed JSON: unexpected character '}' looking for an object key at column 11`},
		{"trailing data", `{"id":"a"} x`, `malformed JSON: unexpected character 'x' after the case object at column 12`},
		{"two objects", `{"id":"a"}{"id":"b"}`, `malformed JSON: unexpected character '{' after the case object at column 11`},
		{"single quotes", `{'id':'a'}`, `malformed JSON: unexpected character ''' looking for an object key at column 2`},
		{"bad escape", `{"id":"a\x"}`, `malformed JSON: unexpected character 'x' in string escape at column 10`},
		{"bad unicode escape", `{"id":"\u12g4"}`, `malformed JSON: unexpected character 'g' in \u escape at column 12`},
		{"control character", "{\"id\":\"a\tb\"}", `malformed JSON: control character 0x09 in string at column 9`},
		{"leading zero", `{"id":"a","x":01}`, `malformed JSON: unexpected character '1' after object value at column 16`},
		{"bare minus", `{"id":"a","x":-}`, `malformed JSON: unexpected character '}' in number at column 16`},
		{"NaN", `{"id":"a","x":NaN}`, `malformed JSON: unexpected character 'N' looking for a value at column 15`},
		{"bad literal", `{"id":"a","x":tru}`, `malformed JSON: unexpected character '}' in literal true at column 18`},
		{"missing colon", `{"id" "a"}`, `malformed JSON: unexpected character '"' after object key at column 7`},
		{"malformed inside a skipped text", `{"id":"a","retrieved":[{"id":"c","text":"x\q"}]}`, `malformed JSON: unexpected character 'q' in string escape at column 44`},
		{"malformed after a type error", `{"id":5,"x":[}`, `malformed JSON: unexpected character '}' looking for a value at column 14`},
		{"BOM inside a line", "\xEF\xBB\xBF{\"id\":\"a\"}", `malformed JSON: unexpected character '\ufeff' looking for a value at column 1`},
		{"array", `["a"]`, `a case must be a JSON object, got array`},
		{"string", `"a"`, `a case must be a JSON object, got string`},
		{"null", `null`, `a case must be a JSON object, got null`},
		{"missing id", `{"locale":"en"}`, `case has no "id"`},
		{"empty id", `{"id":""}`, `case "id" is empty`},
		{"null id", `{"id":null}`, `field "id" must be a string, got null`},
		{"numeric id", `{"id":42}`, `field "id" must be a string, got number`},
		{"object locale", `{"id":"a","locale":{}}`, `field "locale" must be a string, got object`},
		{"bool type", `{"id":"a","type":true}`, `field "type" must be a string, got true`},
		{"array query", `{"id":"a","query":["q"]}`, `field "query" must be a string, got array`},
		{"numeric cluster", `{"id":"a","cluster":7}`, `field "cluster" must be a string, got number`},
		{"cluster repeated", `{"id":"a","cluster":"x","cluster":"y"}`, `duplicate key "cluster" at column 25`},
		{"gold not an array", `{"id":"a","must_cite_one_of":"en-x"}`, `field "must_cite_one_of" must be an array of card ids, got string`},
		{"gold element number", `{"id":"a","must_cite_one_of":["x",3]}`, `must_cite_one_of[1] must be a string, got number`},
		{"relevant_ids not an array", `{"id":"a","relevant_ids":"en-x"}`, `field "relevant_ids" must be an array of card ids, got string`},
		{"relevant_ids element object", `{"id":"a","relevant_ids":["x",{}]}`, `relevant_ids[1] must be a string, got object`},
		{"relevant_ids repeated", `{"id":"a","relevant_ids":[],"relevant_ids":[]}`, `duplicate key "relevant_ids" at column 29`},
		{"retrieved not an array", `{"id":"a","retrieved":{"id":"x"}}`, `field "retrieved" must be an array, got object`},
		{"retrieved entry number", `{"id":"a","retrieved":["x",1]}`, `retrieved[1] must be a card id string or an object, got number`},
		{"retrieved entry null", `{"id":"a","retrieved":[null]}`, `retrieved[0] must be a card id string or an object, got null`},
		{"retrieved entry array", `{"id":"a","retrieved":[["x"]]}`, `retrieved[0] must be a card id string or an object, got array`},
		{"retrieved entry empty string", `{"id":"a","retrieved":[""]}`, `retrieved[0] is an empty string`},
		{"retrieved entry without id", `{"id":"a","retrieved":[{"parent_id":"p"}]}`, `retrieved[0] has no "id"`},
		{"retrieved entry numeric id", `{"id":"a","retrieved":["x",{"id":7}]}`, `retrieved[1].id must be a string, got number`},
		{"retrieved entry empty id", `{"id":"a","retrieved":[{"id":""}]}`, `retrieved[0].id is empty`},
		{"retrieved entry bad parent", `{"id":"a","retrieved":[{"id":"x","parent_id":1}]}`, `retrieved[0].parent_id must be a string, got number`},
		{"retrieved entry string score", `{"id":"a","retrieved":[{"id":"x","score":"0.5"}]}`, `retrieved[0].score must be a number, got string`},
		{"retrieved entry huge score", `{"id":"a","retrieved":[{"id":"x","score":1e999}]}`, `retrieved[0].score 1e999 is out of range`},
		{"scores not an object", `{"id":"a","scores":[1]}`, `field "scores" must be an object, got array`},
		{"scores value string", `{"id":"a","scores":{"hit":"1"}}`, `scores.hit must be a number, got string`},
		{"scores smallest key reported", `{"id":"a","scores":{"z":true,"b":"x"}}`, `scores.b must be a number, got string`},
		{"scores empty key is smallest", `{"id":"a","scores":{"a":true,"":"x"}}`, `scores. must be a number, got string`},
		{"duplicate top-level key", `{"id":"a","retrieved":[],"retrieved":[]}`, `duplicate key "retrieved" at column 26`},
		{"duplicate id of another type", `{"id":1,"id":"b"}`, `duplicate key "id" at column 9`},
		{"duplicate key after unescaping", `{"\u0069d":"x","id":"y"}`, `duplicate key "id" at column 16`},
		{"duplicate scores key", `{"id":"a","scores":{"k":"x","k":1}}`, `duplicate key "k" at column 29`},
		{"duplicate key in a retrieved entry", `{"id":"a","retrieved":[{"id":"x","id":"y"}]}`, `duplicate key "id" at column 34`},
		{"duplicate key in an unknown nested object", `{"id":"a","meta":{"x":{"k":1,"k":2}}}`, `duplicate key "k" at column 30`},
		{"same key in sibling objects is fine, a later syntax error wins", `{"id":"a","retrieved":[{"id":"x"},{"id":"y"}],}`, `malformed JSON: unexpected character '}' looking for an object key at column 47`},
		{"scores huge", `{"id":"a","scores":{"hit":-2e400}}`, `scores.hit -2e400 is out of range`},
		{"both retrieved and scores", `{"id":"a","retrieved":[],"scores":{}}`, `case "a" has both "retrieved" and "scores"; give one`},
		{"field errors in field order", `{"retrieved":5,"id":3}`, `field "id" must be a string, got number`},
		{"first bad element", `{"id":"a","retrieved":[1,{"id":2}]}`, `retrieved[0] must be a card id string or an object, got number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseOne(t, tt.line)
			require.Error(t, err)
			var de *input.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, "cases.jsonl", de.File)
			assert.Equal(t, 7, de.Line)
			assert.Equal(t, "cases.jsonl:7: "+tt.want, err.Error())

			// The reference decoder agrees on validity and on the message.
			_, msg, malformed := refParse([]byte(tt.line))
			if strings.HasPrefix(tt.want, "malformed JSON") {
				assert.True(t, malformed)
			} else {
				assert.False(t, malformed)
				assert.Equal(t, tt.want, msg)
			}
		})
	}
}

func TestParseCaseNesting(t *testing.T) {
	deep := func(n int) string {
		return `{"id":"a","x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	// encoding/json's limit: 10000 nested containers (the case object counts).
	_, err := parseOne(t, deep(10000))
	require.NoError(t, err)
	assert.True(t, json.Valid([]byte(deep(10000))))
	_, err = parseOne(t, deep(10001))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "malformed JSON: nesting deeper than 10000")
	assert.False(t, json.Valid([]byte(deep(10001))))
}

func TestParseCaseReuse(t *testing.T) {
	// Reusing a Case and a parser must not leak fields from the previous line,
	// and strings of a previous case stay intact.
	var p CaseParser
	var c Case
	require.NoError(t, p.Parse([]byte(`{"id":"a","locale":"en","query":"q","must_cite_one_of":["g1","g2"],"retrieved":[{"id":"x","parent_id":"y","score":1}]}`), "f", 1, &c))
	prevGold := c.Gold[1]
	prevID := c.Retrieved[0].Identity()
	require.NoError(t, p.Parse([]byte(`{"id":"b","scores":{"k":1}}`), "f", 2, &c))
	assert.Equal(t, Case{File: "f", Line: 2, ID: "b", Type: "golden", Gold: c.Gold[:0], Retrieved: c.Retrieved[:0],
		Scores: map[string]float64{"k": 1}, Raw: c.Raw}, c)
	assert.Equal(t, "g2", prevGold)
	assert.Equal(t, "y", prevID)
}

// A line longer than MaxLine handed to Parse directly is refused as the line reader
// refuses it (the arena's int32 spans rely on the bound).
func TestParseRefusesOverlongLine(t *testing.T) {
	var p CaseParser
	var c Case
	err := p.Parse(make([]byte, MaxLine+1), "cases.jsonl", 3, &c)
	require.EqualError(t, err, "cases.jsonl:3: line longer than 64 MiB")
}

// The strings of every case stay intact while the parser goes on: cases whose
// strings fill a slab's tail, outgrow it (a query longer than a slab, escaped
// strings) or fail to parse in the middle of decoding.
func TestParseCaseStringsStayIntact(t *testing.T) {
	var p CaseParser
	type want struct{ id, query, gold, ret string }
	var kept []Case
	var wants []want
	for i := range 400 {
		q := strings.Repeat(string(rune('a'+i%26)), []int{1, 300, 900, 1500, 20000}[i%5])
		w := want{id: "case-" + strings.Repeat("x", i%7) + string(rune('A'+i%26)), query: q,
			gold: "g\u00e9" + q[:min(len(q), 40)], ret: "r" + string(rune('0'+i%10))}
		line := `{"id":"` + w.id + `","query":"` + w.query + `","must_cite_one_of":["g\u00e9` + q[:min(len(q), 40)] +
			`"],"retrieved":[{"id":"` + w.ret + `","parent_id":"","score":0.5}]}`
		if i%11 == 3 {
			// A line that fails after some strings were decoded.
			require.Error(t, p.Parse([]byte(line[:len(line)-3]), "f", i, new(Case)))
		}
		c := new(Case)
		require.NoError(t, p.Parse([]byte(line), "f", i+1, c))
		kept, wants = append(kept, *c), append(wants, w)
	}
	for i, c := range kept {
		w := wants[i]
		require.Equal(t, w.id, c.ID, "case %d", i)
		require.Equal(t, w.query, c.Query, "case %d", i)
		require.Equal(t, []string{w.gold}, c.Gold, "case %d", i)
		require.Equal(t, w.ret, c.Retrieved[0].ID, "case %d", i)
	}
}

// Parsing a common case allocates nothing in the steady state (its strings are
// carved from slabs: one allocation per slab, none per case).
func TestParseCaseAllocs(t *testing.T) {
	line := []byte(`{"id": "case-0", "locale": "en", "type": "golden", "query": "How do I do thing number 0?", ` +
		`"must_cite_one_of": ["card-1007"], "retrieved": [{"id": "card-2633#c0", "parent_id": "card-2633", "score": 0.921}, ` +
		`{"id": "card-1007#c1", "parent_id": "card-1007", "score": 0.892}]}`)
	var p CaseParser
	var c Case
	require.NoError(t, p.Parse(line, "f", 1, &c))
	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.Parse(line, "f", 1, &c); err != nil {
			t.Fatal(err)
		}
	})
	// 1000 cases of ~150 bytes of strings: about 10 slabs of 16 KiB.
	assert.LessOrEqual(t, allocs, 0.02)
}

// With StringsInLine the strings that need no unquoting view the line (no
// copy); escaped ones and unknown keys are copies. The values are the same
// either way.
func TestParseStringsInLine(t *testing.T) {
	line := []byte(`{"id": "c1", "locale": "en", "query": "q\u00e9", "must_cite_one_of": ["card-1"], "relevant_ids": ["card-7"], "extra": 1, "retrieved": [` +
		`{"id": "card-1#c0", "parent_id": "card-1", "score": 0.5}, {"id": "card-\u0032#c1", "parent_id": "card-2", "score": 0.25}, ` +
		`{"id": "card-3#c0", "parent_id": "", "score": 1}, "card-4", {"score": 0.1, "id": "card-5"}]}`)
	var plain CaseParser
	var want Case
	require.NoError(t, plain.Parse(line, "f", 1, &want))
	p := CaseParser{StringsInLine: true}
	var c Case
	require.NoError(t, p.Parse(line, "f", 1, &c))
	assert.Equal(t, want, c)
	assert.Equal(t, "card-2#c1", c.Retrieved[1].ID)
	inLine := func(s string) bool {
		if s == "" {
			return false
		}
		d := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		b := uintptr(unsafe.Pointer(&line[0]))
		return d >= b && d < b+uintptr(len(line))
	}
	for _, s := range []string{c.ID, c.Locale, c.Gold[0], c.Relevant[0], c.Retrieved[0].ID, c.Retrieved[0].ParentID,
		c.Retrieved[1].ParentID, c.Retrieved[2].ID, c.Retrieved[3].ID, c.Retrieved[4].ID} {
		assert.True(t, inLine(s), "%q views the line", s)
	}
	assert.False(t, inLine(c.Query), "escaped: unquoted into a copy")
	assert.False(t, inLine(c.Retrieved[1].ID), "escaped: unquoted into a copy")
	assert.False(t, inLine(c.Unknown[0]), "unknown keys are copies")
	assert.Empty(t, c.Retrieved[2].ParentID)
	assert.False(t, inLine(want.Retrieved[0].ID), "without the option: a copy")
	assert.False(t, inLine(want.ID), "without the option: a copy")

	// Errors that name a string of the line still do.
	err := p.Parse([]byte(`{"id": "both", "retrieved": [], "scores": {}}`), "f", 2, &c)
	require.EqualError(t, err, `f:2: case "both" has both "retrieved" and "scores"; give one`)
}

// The fast path takes the lines the common writers write (the benchmark's,
// retrieve's with its provenance, encoding/json's compact form, text past
// ASCII), with and without NoScores, and leaves the others to the general
// scanner: both decode a line alike (FuzzParseCase).
func TestParseFastTakesCommonShapes(t *testing.T) {
	tests := map[string]struct {
		line string
		fast bool
	}{
		"benchmark": {`{"id": "case-0", "locale": "en", "type": "golden", "query": "How do I do thing number 0 in the product?", "must_cite_one_of": ["card-1007", "card-1008"], "retrieved": [{"id": "card-2633#c0", "parent_id": "card-2633", "score": 0.921}, {"id": "card-1007#c1", "parent_id": "card-1007", "score": 0.892}]}`, true},
		"retrieve":  {`{"id": "en-golden-001", "locale": "en", "query": "q", "must_cite_one_of": ["en-reset-password"], "retrieved": [{"id": "en-reset-password#c1", "parent_id": "en-reset-password", "score": 0.179872}], "retrieval": {"strategy": "dense", "store": "memory", "k": 10}}`, true},
		"compact":   {`{"id":"a","query":"q","relevant_ids":["r"],"retrieved":[{"id":"x","parent_id":"","score":1}]}`, true},
		"pt-BR":     {`{"id": "a", "locale": "pt-BR", "query": "Como faço a troca de senha?", "retrieved": []}`, true},
		"escape":    {`{"id": "a\u0062"}`, false},
		"null":      {`{"id": "a", "locale": null}`, false},
		"unknown":   {`{"id": "a", "must_cite": ["x"]}`, false},
		"scores":    {`{"id": "a", "scores": {"x": 1}}`, false},
		"strings":   {`{"id": "a", "retrieved": ["x"]}`, false},
		"text":      {`{"id": "a", "retrieved": [{"id": "x", "text": "t"}]}`, false},
		"exponent":  {`{"id": "a", "retrieved": [{"id": "x", "parent_id": "p", "score": 1e-5}]}`, false},
		"empty id":  {`{"id": ""}`, false},
		"malformed": {`{"id": "a",}`, false},
		"cluster":   {`{"id": "a", "cluster": "en-reset-password", "query": "q"}`, false}, // issue 34 item 2: the general scanner reads it
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var fc, gc Case
			require.Equal(t, tt.fast, (&CaseParser{StringsInLine: true}).parseFast([]byte(tt.line), "f", 3, &fc))
			// check's parser (NoScores: the scores validated, not decoded)
			// takes the same lines.
			var nc Case
			require.Equal(t, tt.fast, (&CaseParser{StringsInLine: true, NoScores: true}).parseFast([]byte(tt.line), "f", 3, &nc), "NoScores")
			gerr := (&CaseParser{StringsInLine: true, noFast: true}).Parse([]byte(tt.line), "f", 3, &gc)
			var c Case
			err := (&CaseParser{StringsInLine: true}).Parse([]byte(tt.line), "f", 3, &c)
			require.Equal(t, fmt.Sprint(gerr), fmt.Sprint(err))
			if err == nil {
				require.True(t, sameRef(toRef(&gc), toRef(&c)), "%+v\n%+v", c, gc)
			}
		})
	}
}

// TestAloneOwnsItsLines: a worker's parser and case (and the Parquet
// worker's state) keep two cache lines of padding on each side, so that two
// workers' memory allocated side by side shares no line.
func TestAloneOwnsItsLines(t *testing.T) {
	check := func(t *testing.T, size, off, inner uintptr) {
		t.Helper()
		assert.GreaterOrEqual(t, off, uintptr(128), "padding before")
		assert.GreaterOrEqual(t, size-off-inner, uintptr(128), "padding after")
	}
	var w alone[struct {
		p CaseParser
		c Case
	}]
	check(t, unsafe.Sizeof(w), unsafe.Offsetof(w.v), unsafe.Sizeof(w.v))
	var pw alone[pqWorker]
	check(t, unsafe.Sizeof(pw), unsafe.Offsetof(pw.v), unsafe.Sizeof(pw.v))
}

// TestRetrievalK: with RetrievalK (check's reader) a "retrieval" that is not
// an object, or a "k" that is not an integer of at least 1, is an error on any
// line, by both paths; null is absent; without RetrievalK the object is
// skipped whatever it holds. A valid retrieve line stays on the fast path.
func TestRetrievalK(t *testing.T) {
	const pre = `{"id": "c", "retrieved": [{"id": "a#1", "parent_id": "a", "score": 0.5}], "retrieval": `
	const msgK = "f:7: retrieval.k must be an integer of at least 1 (the k the run was retrieved at), got "
	tests := []struct {
		name, retrieval, want string
		fast                  bool // parseFast takes the line with RetrievalK
	}{
		{"retrieve's", `{"strategy": "dense", "store": "memory", "embedder": "hash", "k": 10}`, "", true},
		{"k alone", `{"k": 1}`, "", true},
		{"no k", `{"strategy": "dense"}`, "", true},
		{"empty", `{}`, "", true},
		{"k null", `{"k": null}`, "", true},
		{"retrieval null", `null`, "", true}, // absent
		{"k escaped", `{"\u006b": 3}`, "", true},
		{"k nested is not k", `{"x": {"k": 0}}`, "", true},
		{"k as a string", `{"k": "10"}`, msgK + `"10"`, false},
		{"k zero", `{"k": 0}`, msgK + "0", false},
		{"k negative", `{"k": -3}`, msgK + "-3", false},
		{"k a fraction", `{"k": 2.5}`, msgK + "2.5", false},
		{"k an exponent", `{"k": 1e3}`, msgK + "1e3", false},
		{"k beyond an int", `{"k": 99999999999999999999}`, msgK + "99999999999999999999", false},
		{"k an array", `{"strategy": "dense", "k": [1]}`, msgK + "array", false},
		{"k true", `{"k": true}`, msgK + "true", false},
		{"k escaped and bad", `{"\u006b": 0}`, msgK + "0", false},
		{"a number", `5`, `f:7: retrieval.k cannot be read: field "retrieval" must be an object, got number`, false},
		{"a string", `"k=10"`, `f:7: retrieval.k cannot be read: field "retrieval" must be an object, got string`, false},
		{"an array", `[{"k": 1}]`, `f:7: retrieval.k cannot be read: field "retrieval" must be an object, got array`, false},
		{"k twice", `{"k": 1, "k": 2}`, `f:7: duplicate key "k" at column 97`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := []byte(pre + tt.retrieval + "}")
			var fc Case
			assert.Equal(t, tt.fast, (&CaseParser{StringsInLine: true, RetrievalK: true}).parseFast(line, "f", 7, &fc), "the fast path")
			for _, noFast := range []bool{false, true} {
				var c Case
				err := (&CaseParser{StringsInLine: true, RetrievalK: true, noFast: noFast}).Parse(line, "f", 7, &c)
				if tt.want == "" {
					require.NoError(t, err)
					assert.Equal(t, "c", c.ID)
				} else {
					require.EqualError(t, err, tt.want, "general scanner only: %v", noFast)
				}
			}
			// Without RetrievalK (every other reader) only the syntax counts.
			var c Case
			err := (&CaseParser{StringsInLine: true}).Parse(line, "f", 7, &c)
			if strings.Contains(tt.want, "duplicate key") {
				require.EqualError(t, err, tt.want)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// TestCaseValuesCap: a case's arrays and scores hold at most jsonpos.MaxValues
// values together (the cap on what a line may take in memory beyond its bytes:
// a retrieved entry takes 48 bytes and more where its input can take four), so a
// line of more is refused at the first value past the cap, on either path.
func TestCaseValuesCap(t *testing.T) {
	gold := 3
	line := func(retrieved int) string {
		return `{"id":"x","must_cite_one_of":["a","b","c"],"retrieved":[` + strings.Repeat(`"a",`, retrieved-1) + `"a"]}`
	}
	for _, p := range []*CaseParser{{}, {StringsInLine: true, NoScores: true}} {
		var c Case
		require.NoError(t, p.Parse([]byte(line(jsonpos.MaxValues-gold)), "cases.jsonl", 7, &c))
		assert.Len(t, c.Retrieved, jsonpos.MaxValues-gold)
		text := line(jsonpos.MaxValues - gold + 1)
		err := p.Parse([]byte(text), "cases.jsonl", 7, &c)
		require.EqualError(t, err, fmt.Sprintf("cases.jsonl:7: more than 1,048,576 values in one record (the cap on what a record may take in memory) at column %d", len(text)-4))
	}
	var b strings.Builder
	b.WriteString(`{"id":"x","scores":{`)
	for i := range jsonpos.MaxValues + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":1`, i)
	}
	b.WriteString("}}")
	_, err := parseOne(t, b.String())
	require.ErrorContains(t, err, "cases.jsonl:7: more than 1,048,576 values in one record")
}
