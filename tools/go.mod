module github.com/agent-rewind/rewind/tools

go 1.26
