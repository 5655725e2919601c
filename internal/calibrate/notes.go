package calibrate

// NoteCode names one note about a dimension: why its numbers or its status are
// what they are. A note is data (the code and its numbers); the sentence is
// written by the report layer (calibratereport.NoteText), also for the JSON
// "notes".
type NoteCode string

// The note codes, with the Note fields each one uses.
const (
	// NoteNoPairs: no paired cases, so kappa is undefined.
	NoteNoPairs NoteCode = "no_pairs"
	// NoteKappaUndefined: both sides put every paired case in the same bin
	// (chance agreement is 1), so kappa is undefined.
	NoteKappaUndefined NoteCode = "kappa_undefined"
	// NoteUnpaired: Human labels without a judge score and Judge scores
	// without a human label are not in n.
	NoteUnpaired NoteCode = "unpaired"
	// NoteTooManyUnpaired: N unpaired labels exceed --max-unpaired Spec, which
	// allows at most Limit of the Of labelled cases; the gate fails.
	NoteTooManyUnpaired NoteCode = "too_many_unpaired"
	// NoteConstructMismatch: the lock measures Construct, the human labels
	// declare HumanConstructs and the judge scores JudgeConstructs.
	NoteConstructMismatch NoteCode = "construct_mismatch"
	// NoteBelowMinN: n = N paired cases is below min_n Limit (DefaultMinN: the
	// lock does not set min_n); Gated: the gate fails, else it is reported only.
	NoteBelowMinN NoteCode = "below_min_n"
	// NoteKappaBelow: weighted kappa Value is below min_kappa Threshold;
	// Gated: false when the dimension is reported only.
	NoteKappaBelow NoteCode = "kappa_below"
	// NoteUndefinedFails: a gated dimension with undefined kappa fails.
	NoteUndefinedFails NoteCode = "undefined_fails"
)

// NoteCodes are every NoteCode, in the order a dimension's notes come.
var NoteCodes = []NoteCode{
	NoteNoPairs, NoteKappaUndefined, NoteUnpaired, NoteTooManyUnpaired,
	NoteConstructMismatch, NoteBelowMinN, NoteKappaBelow, NoteUndefinedFails,
}

// Note is one note about a dimension: a code and its numbers and names (see
// each code for the fields it uses).
type Note struct {
	Code NoteCode
	// Counts: paired cases or unpaired labels (N), the labels of each side
	// without a partner (Human, Judge), a limit (min_n, the unpaired labels
	// allowed) and what it is a limit of (Of: the labelled cases).
	N, Human, Judge, Limit, Of int
	// Value and Threshold: weighted kappa and min_kappa.
	Value, Threshold float64
	// Gated: the dimension is gated (the note fails its gate); DefaultMinN:
	// min_n is the default, the lock does not set it.
	Gated, DefaultMinN bool
	// Spec is the --max-unpaired limit as given.
	Spec string
	// Construct is the lock's construct; HumanConstructs and JudgeConstructs
	// are the distinct constructs each side declared.
	Construct                        string
	HumanConstructs, JudgeConstructs []string
}
