// Package agentconfig is the agent clients' configuration files, as agent-rewind setup writes
// them and agent-rewind doctor reads them: where each client reads its hooks and MCP servers, in
// the project and in the user's folder (clients.go); how agent-rewind's entries are made from
// the shipped integration files of integrations/, which the binary carries (shipped.go,
// generated), with the programs' absolute paths filled in (binaries.go); how they are merged
// into a client's JSON file member by member (jsontree.go, merge.go, parts.go), appended to a
// TOML file as text (toml.go, tomledit.go) or written as a whole hook script, and taken out again
// (setup.go); Codex's hook trust (codextrust.go); and what doctor checks (inspect.go, trust.go).
// A client's facts (events, tools, MCP naming) are barrier's: this package only says where the
// files are and what goes in them.
//
// # Records
//
// What setup added to a file is kept outside it, in the state folder, one JSON file per
// configuration file: <state folder>/setup/<first 32 hex digits of sha256(the file's path)>.json,
// mode 0600, written durably:
//
//	{"file": "/home/me/shop/.claude/settings.json",
//	 "created": true, "dirs": ["/home/me/shop/.claude"],
//	 "json": [{"path": ["hooks"], "container": "object"},
//	          {"path": ["hooks", "PreToolUse"], "container": "array"},
//	          {"path": ["hooks", "PreToolUse"], "elem": true, "value": "{...}"}],
//	 "replaced": [{"path": ["hooks", "PreToolUse"], "elem": true, "value": "{...}"}],
//	 "blocks": [{"kind": "mcp", "text": "[mcp_servers.agent-rewind]\n..."}],
//	 "script": "#!/bin/sh\n...", "original": "...", "mode": 493,
//	 "clients": ["claude-code"]}
//
// json lists the members (a leaf's value as compact JSON) and array elements setup added, and the
// containers it made empty to fill; replaced what it took out to put its own in their place;
// blocks the TOML tables it appended (kind mcp, trust with "for" the hooks file, replaced); script
// and original a whole hook script it wrote and the one it replaced. --remove takes out each
// entry still exactly as recorded, puts back what was replaced, deletes a file setup made once
// nothing else is in it, and then the record.
package agentconfig
