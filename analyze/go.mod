module github.com/agent-rewind/rewind/analyze

go 1.26
