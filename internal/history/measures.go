package history

import (
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// checkMeasures refuses a document whose measure values, the ones the trend
// and the history page read, have the wrong JSON type: they skipped such a
// value without a word (a mean given as a string was a run missing from the
// chart). The measures are those of check's groups (overall, by_type.NAME,
// by_locale.TAG, and the same groups of its baseline section) and of compare's
// strategies (strategies.NAME); of each measure (metrics.KEY) its mean (the
// baseline's delta), ci95 and n, and the group's n. A value is named by its
// path in the record, in report --from's words: "document.overall.metrics.
// retrieval_hit_at_k.mean is a string, not a number".
//
// What the documents write on purpose stays accepted: a mean or delta, and a
// bound of ci95, may be null (undefined, n = 0: shown as "—"); an absent key,
// or an object (a group, its metrics, a measure), a list of groups or ci95
// given as null, is none (a document older than the key, a map with nothing
// in it). An n, where there is one, is a number.
func checkMeasures(doc *fastjson.Value) error {
	o, err := doc.Object()
	if err != nil {
		return nil //nolint:nilerr // record() requires an object: nothing else comes here
	}
	var c measureCheck
	c.groups(o, true)
	return c.err
}

// measureCheck walks a document for checkMeasures. The path of the value
// checked is kept as its keys, made a string only for the message: a history
// of thousands of records is read on every run, and its values are checked
// without building a path for each.
type measureCheck struct {
	keys [][]byte // from the document down; valid while their objects are visited
	err  error
}

// fail records the first error: the value at the current path (its element
// index when index ≥ 0) is v, and should be want.
func (c *measureCheck) fail(v *fastjson.Value, want string, index int) {
	if c.err != nil {
		return
	}
	path := "document"
	for _, k := range c.keys {
		path = jsonpos.Path(path, string(k))
	}
	if index >= 0 {
		path = jsonpos.Index(path, index)
	}
	c.err = fmt.Errorf("%s is %s, not %s", path, shown(v), want)
}

// at runs fn with key appended to the path.
func (c *measureCheck) at(key []byte, fn func()) {
	c.keys = append(c.keys, key)
	fn()
	c.keys = c.keys[:len(c.keys)-1]
}

// object is v as an object; nil for none (absent or null) and for a value of
// another type, which fails.
func (c *measureCheck) object(v *fastjson.Value) *fastjson.Object {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	o, err := v.Object()
	if err != nil {
		c.fail(v, "an object", -1)
	}
	return o
}

func (c *measureCheck) number(v *fastjson.Value, nullOK bool, index int) {
	if v.Type() == fastjson.TypeNumber || (nullOK && v.Type() == fastjson.TypeNull) {
		return
	}
	c.fail(v, "a number", index)
}

// groups checks the groups of the document (top) or of its baseline section,
// in the document's order: the first wrong value is the one reported.
func (c *measureCheck) groups(o *fastjson.Object, top bool) {
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "overall":
			c.at(k, func() { c.group(v) })
		case "by_type", "by_locale", "strategies":
			c.at(k, func() {
				if all := c.object(v); all != nil {
					all.Visit(func(name []byte, g *fastjson.Value) { c.at(name, func() { c.group(g) }) })
				}
			})
		case "baseline":
			if top {
				c.at(k, func() {
					if b := c.object(v); b != nil {
						c.groups(b, false)
					}
				})
			}
		}
	})
}

// group checks a group (or a strategy): its n and its measures.
func (c *measureCheck) group(v *fastjson.Value) {
	g := c.object(v)
	if g == nil {
		return
	}
	g.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "n":
			c.at(k, func() { c.number(v, false, -1) })
		case "metrics":
			c.at(k, func() {
				if ms := c.object(v); ms != nil {
					ms.Visit(func(key []byte, m *fastjson.Value) {
						c.at(key, func() {
							if o := c.object(m); o != nil {
								c.measure(o)
							}
						})
					})
				}
			})
		}
	})
}

// measure checks a measure's mean (delta), n and ci95.
func (c *measureCheck) measure(m *fastjson.Object) {
	m.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "mean", "delta":
			c.at(k, func() { c.number(v, true, -1) })
		case "n":
			c.at(k, func() { c.number(v, false, -1) })
		case "ci95":
			c.at(k, func() {
				if v.Type() == fastjson.TypeNull {
					return
				}
				a, err := v.Array()
				if err != nil || len(a) != 2 {
					c.fail(v, "an interval [lower, upper]", -1)
					return
				}
				for i, b := range a {
					c.number(b, true, i)
				}
			})
		}
	})
}

// shown is a value as a message that refuses its type shows it, as report
// --from's do (jsonpos.Shown).
func shown(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeNumber:
		return jsonpos.Shown(jsonpos.Number, false, v.MarshalTo(nil))
	case fastjson.TypeString:
		return jsonpos.Shown(jsonpos.String, false, nil)
	case fastjson.TypeNull:
		return jsonpos.Shown(jsonpos.Null, false, nil)
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return jsonpos.Shown(jsonpos.Bool, v.Type() == fastjson.TypeTrue, nil)
	case fastjson.TypeArray:
		return jsonpos.Shown(jsonpos.Array, false, nil)
	}
	return jsonpos.Shown(jsonpos.Object, false, nil)
}
