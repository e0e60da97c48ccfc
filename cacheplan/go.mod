module github.com/agent-rewind/rewind/cacheplan

go 1.26

require github.com/agent-rewind/rewind/internal v0.1.0
