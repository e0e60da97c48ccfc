module github.com/agent-rewind/rewind/hashchain

go 1.26
