module github.com/agent-rewind/rewind/analyze

go 1.26

require github.com/agent-rewind/rewind/internal v0.0.0

replace github.com/agent-rewind/rewind/internal => ../internal
