package labelfile

import "unsafe"

// Test-only views of the records and the lock (production code reads
// labels through the scanner, which checks dimension and bin on its own path).

// bytesPer is the column's memory per label.
func (c *column[T]) bytesPer() int {
	if c.v == nil {
		return 0
	}
	var x T
	return int(unsafe.Sizeof(x))
}

// BytesPerLabel is the memory the columns take per label (the case ids'
// bytes, the tables of names and scores and spilled labels aside).
func (ls *Labels) BytesPerLabel() int {
	n := int(unsafe.Sizeof(uint64(0))) + ls.dimCons.bytesPer() + ls.bins.bytesPer() + ls.scores.bytesPer() +
		ls.sec.bytesPer() + ls.nsec.bytesPer() + ls.loc.bytesPer() + ls.rater.bytesPer()
	if ls.scoreF != nil {
		n += 8
	}
	if ls.lineCol != nil {
		n += 4
	}
	return n
}

// checkLabel validates a label against the lock and fills its Bin.
func (l *Lock) checkLabel(lb *Label) error {
	if err := l.checkDimension(lb); err != nil {
		return err
	}
	return l.checkBin(lb)
}
