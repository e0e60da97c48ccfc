module github.com/agent-rewind/rewind/snapshot

go 1.26

require (
	github.com/agent-rewind/rewind/internal v0.1.0
	golang.org/x/sync v0.19.0
)
