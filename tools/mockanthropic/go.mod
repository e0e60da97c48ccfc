module github.com/agent-rewind/rewind/tools/mockanthropic

go 1.26
