package good

type Kind string

const (
	A Kind = "a"
	B Kind = "b"
	// c is untyped: not a Kind constant.
	c = "c"
)

var Kinds = []Kind{A, B}
