module github.com/agent-rewind/rewind/cacheplan

go 1.26
