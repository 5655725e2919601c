package check

import "github.com/retrieval-gate/retrieval-gate/internal/baseline"

// Locate names every case place of the result (the integrity problems, the
// missed cases, the flips, the cases only in this run or whose gold changed,
// the most changed cases without gold) as locate names a line of the cases
// input: for cases read as shards (input.Sharded.Locate), the shard and the
// line there instead of the input's name and the line counted over the
// shards. Only places in file (the cases input as CasesName gave it) are
// renamed: a baseline's lines stay the baseline's. The scoring keeps the
// stream's lines (the duplicate-id log keys on them, and the errors are
// remapped once, input.Sharded.Remap); this pass costs a lookup per listed
// place, after the run.
func (r *Result) Locate(file string, locate func(line int) (string, int)) {
	at := func(f *string, l *int) {
		if *f == file && *l > 0 {
			*f, *l = locate(*l)
		}
	}
	if g := r.Gate; g != nil {
		for i := range g.Integrity.Problems {
			p := &g.Integrity.Problems[i]
			at(&p.File, &p.Line)
		}
		for _, m := range g.Missed {
			at(&m.File, &m.Line)
		}
	}
	c := r.Comparison
	if c == nil {
		return
	}
	for _, fs := range [][]baseline.Flip{c.NewlyMissed, c.NewlyFound, c.RankDrops} {
		for i := range fs {
			at(&fs[i].File, &fs[i].Line)
		}
	}
	for i := range c.OnlyCurrentList {
		at(&c.OnlyCurrentList[i].File, &c.OnlyCurrentList[i].Line)
	}
	for i := range c.GoldChangedList {
		at(&c.GoldChangedList[i].File, &c.GoldChangedList[i].Line)
	}
	for i := range c.Overlap.MostChanged {
		at(&c.Overlap.MostChanged[i].File, &c.Overlap.MostChanged[i].Line)
	}
}

// LocateBaseline names the cases only in the baseline (listed with the line
// of the baseline input and no file: the report names the baseline as given)
// as locate names a line of the baseline input: for a baseline read as shards
// (input.Sharded.Locate), the shard and the line there instead of the line
// counted over the shards.
func (r *Result) LocateBaseline(locate func(line int) (string, int)) {
	c := r.Comparison
	if c == nil {
		return
	}
	for i := range c.OnlyBaselineList {
		ref := &c.OnlyBaselineList[i]
		if ref.File == "" && ref.Line > 0 {
			ref.File, ref.Line = locate(ref.Line)
		}
	}
}
