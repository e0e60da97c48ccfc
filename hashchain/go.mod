module github.com/agent-rewind/rewind/hashchain

go 1.26.0

require golang.org/x/mod v0.43.0
