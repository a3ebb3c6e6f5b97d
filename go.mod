module github.com/loadgate/loadgate

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.2.0 // indirect
	github.com/compose-spec/compose-go/v2 v2.10.1 // indirect
	github.com/docker/cli v28.5.2+incompatible // indirect
	github.com/docker/compose/v5 v5.0.2 // indirect
	github.com/docker/docker v28.5.2+incompatible // indirect
	github.com/google/go-github/v62 v62.0.0 // indirect
	github.com/sethvargo/go-githubactions v1.3.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
