module example.com/gotest

go 1.26.8

require github.com/retrieval-gate/retrieval-gate v0.0.0

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/retrieval-gate/retrieval-gate => ../..
