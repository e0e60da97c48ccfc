module github.com/agent-rewind/rewind/barrier

go 1.26
