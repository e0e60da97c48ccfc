module github.com/agent-rewind/rewind/internal

go 1.26
