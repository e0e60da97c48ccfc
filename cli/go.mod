module github.com/agent-rewind/rewind/cli

go 1.26

require github.com/alecthomas/kong v1.17.0
