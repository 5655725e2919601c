package extra

type Kind string

const A Kind = "a"

const Other = "o"

var Kinds = []Kind{A, A, Other}
