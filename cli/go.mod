module github.com/agent-rewind/rewind/cli

go 1.26

require (
	github.com/agent-rewind/rewind/analyze v0.0.0-00010101000000-000000000000
	github.com/agent-rewind/rewind/cacheplan v0.0.0-00010101000000-000000000000
	github.com/alecthomas/kong v1.17.0
)

replace (
	github.com/agent-rewind/rewind/analyze => ../analyze
	github.com/agent-rewind/rewind/cacheplan => ../cacheplan
)
