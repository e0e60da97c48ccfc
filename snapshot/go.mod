module github.com/agent-rewind/rewind/snapshot

go 1.26

require golang.org/x/sync v0.19.0
