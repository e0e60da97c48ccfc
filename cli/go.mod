module github.com/agent-rewind/rewind/cli

go 1.26.0

require (
	github.com/agent-rewind/rewind/analyze v0.0.0
	github.com/agent-rewind/rewind/barrier v0.0.0
	github.com/agent-rewind/rewind/cacheplan v0.0.0
	github.com/agent-rewind/rewind/hashchain v0.0.0
	github.com/agent-rewind/rewind/snapshot v0.0.0
	github.com/alecthomas/kong v1.17.0
	golang.org/x/mod v0.43.0
)

require golang.org/x/sync v0.19.0 // indirect

replace (
	github.com/agent-rewind/rewind/analyze => ../analyze
	github.com/agent-rewind/rewind/barrier => ../barrier
	github.com/agent-rewind/rewind/cacheplan => ../cacheplan
	github.com/agent-rewind/rewind/hashchain => ../hashchain
	github.com/agent-rewind/rewind/snapshot => ../snapshot
)
