package missing

type Kind string

const (
	A Kind = "a"
	B Kind = "b"
)

var Kinds = []Kind{A}
