module github.com/agent-rewind/rewind/cli

go 1.26.0

require (
	github.com/Microsoft/go-winio v0.6.4
	github.com/agent-rewind/rewind/analyze v0.1.0
	github.com/agent-rewind/rewind/barrier v0.1.0
	github.com/agent-rewind/rewind/cacheplan v0.1.0
	github.com/agent-rewind/rewind/gateway v0.1.0
	github.com/agent-rewind/rewind/hashchain v0.1.0
	github.com/agent-rewind/rewind/internal v0.1.0
	github.com/agent-rewind/rewind/mcpserver v0.1.0
	github.com/agent-rewind/rewind/snapshot v0.1.0
	github.com/agent-rewind/rewind/tape/pgtape v0.1.0
	github.com/alecthomas/kong v1.17.0
	github.com/chromedp/chromedp v0.23.1
	github.com/jackc/pgx/v5 v5.7.6
	github.com/modelcontextprotocol/go-sdk v1.8.0
	golang.org/x/mod v0.43.0
)

require (
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

require (
	github.com/agent-rewind/rewind/tape v0.1.0 // indirect
	github.com/agent-rewind/rewind/tools/mockanthropic v0.1.0
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/ncruces/go-sqlite3 v0.37.0 // indirect
	github.com/ncruces/go-sqlite3-wasm/v6 v6.5.35401 // indirect
	github.com/ncruces/julianday v1.0.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0
	golang.org/x/time v0.15.0 // indirect
)
