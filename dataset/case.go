package dataset

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/valyala/fastjson"
)

// Retrieved is one entry of a case's ranked `retrieved` list.
type Retrieved struct {
	ID       string
	ParentID string // empty when absent
	Score    float64
	HasScore bool
}

// Identity is the card identity of the entry: parent_id where present, else id.
func (r Retrieved) Identity() string {
	if r.ParentID != "" {
		return r.ParentID
	}
	return r.ID
}

// Case is one line of a cases JSONL file.
type Case struct {
	File   string
	Line   int // 1-based line number in File
	ID     string
	Locale string
	Type   string // "golden" when absent
	Query  string
	// Gold is must_cite_one_of as given (duplicates kept); nil or empty means no gold.
	Gold []string
	// GoldLines is unused; Gold ids are all on Line.
	Retrieved    []Retrieved
	HasRetrieved bool
	// Scores holds precomputed per-case scores; nil when the case has no `scores`.
	Scores map[string]float64
	// Raw is the original line without its newline. Valid only during the
	// callback that receives the Case; copy it to keep it.
	Raw []byte
}

// HasGold reports whether the case carries at least one gold id.
func (c *Case) HasGold() bool { return len(c.Gold) > 0 }

// StreamCases reads cases JSONL from r (named file in errors) and calls fn once per
// case, in file order, from a single goroutine. Blank lines are skipped. The *Case
// passed to fn is only valid during the call. The first error (from parsing or fn)
// stops the stream and is returned; parse errors are *Error with file and line.
func StreamCases(ctx context.Context, r io.Reader, file string, fn func(*Case) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var p fastjson.Parser
	var c Case
	line := 0
	for sc.Scan() {
		line++
		if line&0x3ff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b := sc.Bytes()
		if isBlank(b) {
			continue
		}
		if err := ParseCase(&p, b, file, line, &c); err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("failed to read %s: %w", file, err)
	}
	return nil
}

func isBlank(b []byte) bool {
	for _, ch := range b {
		if ch != ' ' && ch != '\t' && ch != '\r' {
			return false
		}
	}
	return true
}

// ParseCase decodes one JSON line into c, reusing c's slices.
func ParseCase(p *fastjson.Parser, b []byte, file string, line int, c *Case) error {
	v, err := p.ParseBytes(b)
	if err != nil {
		return Errorf(file, line, "malformed JSON: %v", err)
	}
	o, err := v.Object()
	if err != nil {
		return Errorf(file, line, "a case must be a JSON object, got %s", v.Type())
	}
	*c = Case{File: file, Line: line, Raw: b, Gold: c.Gold[:0], Retrieved: c.Retrieved[:0], Type: "golden"}
	var perr error
	str := func(key string, dst *string, val *fastjson.Value) {
		if val.Type() != fastjson.TypeString {
			perr = Errorf(file, line, "field %q must be a string, got %s", key, val.Type())
			return
		}
		*dst = string(val.GetStringBytes())
	}
	o.Visit(func(key []byte, val *fastjson.Value) {
		if perr != nil {
			return
		}
		switch string(key) {
		case "id":
			str("id", &c.ID, val)
		case "locale":
			str("locale", &c.Locale, val)
		case "type":
			if val.Type() != fastjson.TypeNull {
				str("type", &c.Type, val)
			}
		case "query":
			if val.Type() != fastjson.TypeNull {
				str("query", &c.Query, val)
			}
		case "must_cite_one_of":
			if val.Type() == fastjson.TypeNull {
				return
			}
			arr, err := val.Array()
			if err != nil {
				perr = Errorf(file, line, "field \"must_cite_one_of\" must be an array of card ids, got %s", val.Type())
				return
			}
			for i, g := range arr {
				if g.Type() != fastjson.TypeString {
					perr = Errorf(file, line, "must_cite_one_of[%d] must be a string, got %s", i, g.Type())
					return
				}
				c.Gold = append(c.Gold, string(g.GetStringBytes()))
			}
		case "retrieved":
			if val.Type() == fastjson.TypeNull {
				return
			}
			arr, err := val.Array()
			if err != nil {
				perr = Errorf(file, line, "field \"retrieved\" must be an array, got %s", val.Type())
				return
			}
			c.HasRetrieved = true
			for i, e := range arr {
				r, err := parseRetrieved(e, file, line, i)
				if err != nil {
					perr = err
					return
				}
				c.Retrieved = append(c.Retrieved, r)
			}
		case "scores":
			if val.Type() == fastjson.TypeNull {
				return
			}
			so, err := val.Object()
			if err != nil {
				perr = Errorf(file, line, "field \"scores\" must be an object, got %s", val.Type())
				return
			}
			c.Scores = make(map[string]float64, so.Len())
			so.Visit(func(k []byte, sv *fastjson.Value) {
				if perr != nil {
					return
				}
				f, err := sv.Float64()
				if err != nil {
					perr = Errorf(file, line, "scores.%s must be a number, got %s", k, sv.Type())
					return
				}
				c.Scores[string(k)] = f
			})
		}
	})
	if perr != nil {
		return perr
	}
	if c.ID == "" {
		return Errorf(file, line, "case has no \"id\"")
	}
	if c.HasRetrieved && c.Scores != nil {
		return Errorf(file, line, "case %q has both \"retrieved\" and \"scores\"; give one", c.ID)
	}
	return nil
}

func parseRetrieved(e *fastjson.Value, file string, line, i int) (Retrieved, error) {
	switch e.Type() {
	case fastjson.TypeString:
		return Retrieved{ID: string(e.GetStringBytes())}, nil
	case fastjson.TypeObject:
		var r Retrieved
		idv := e.Get("id")
		if idv == nil || idv.Type() != fastjson.TypeString || len(idv.GetStringBytes()) == 0 {
			return r, Errorf(file, line, "retrieved[%d] needs a string \"id\"", i)
		}
		r.ID = string(idv.GetStringBytes())
		if pv := e.Get("parent_id"); pv != nil && pv.Type() != fastjson.TypeNull {
			if pv.Type() != fastjson.TypeString {
				return r, Errorf(file, line, "retrieved[%d].parent_id must be a string, got %s", i, pv.Type())
			}
			r.ParentID = string(pv.GetStringBytes())
		}
		if sv := e.Get("score"); sv != nil && sv.Type() != fastjson.TypeNull {
			f, err := sv.Float64()
			if err != nil {
				return r, Errorf(file, line, "retrieved[%d].score must be a number, got %s", i, sv.Type())
			}
			r.Score, r.HasScore = f, true
		}
		return r, nil
	default:
		return Retrieved{}, Errorf(file, line, "retrieved[%d] must be a card id string or an object, got %s", i, e.Type())
	}
}

// MapCases reads cases JSONL from r and calls work for each case, possibly on up to
// `workers` goroutines at once (workers <= 0 means GOMAXPROCS); the *Case given to
// work is only valid during that call. emit receives work's results in file order,
// from one goroutine. The first error (parse, work or emit) stops the stream.
//
// This first version is sequential; the signature is the stable part.
func MapCases[T any](ctx context.Context, r io.Reader, file string, workers int, work func(*Case) (T, error), emit func(T) error) error {
	return StreamCases(ctx, r, file, func(c *Case) error {
		t, err := work(c)
		if err != nil {
			return err
		}
		return emit(t)
	})
}
