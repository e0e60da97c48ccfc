module github.com/agent-rewind/rewind/tools

go 1.26.0

require github.com/agent-rewind/rewind/hashchain v0.1.0

require (
	github.com/agent-rewind/rewind/internal v0.1.0 // indirect
	github.com/agent-rewind/rewind/tools/mockanthropic v0.1.0
	golang.org/x/mod v0.43.0
)
