module github.com/agent-rewind/rewind/barrier

go 1.26

require github.com/agent-rewind/rewind/internal v0.1.0
