// Package agents is the real-client harness: the pinned agent clients (Claude Code, Codex CLI,
// Gemini CLI, Cline, GitHub Copilot CLI, installed from npm by tools/agents/clients) run
// headless against a scripted mock model on 127.0.0.1 (package mockmodel), with agent-rewind's
// integration files installed as docs/agents.md tells a user, and the tests check what the
// clients really did: which tools they offered the model, which store their hooks and MCP
// servers wrote to, the automatic checkpoints and the tool call ids they carry, the refusals
// of repeated effects and what the model read of them.
//
// Run it from the repository root:
//
//	npm ci --prefix tools/agents/clients
//	REWIND_AGENTS=$PWD/tools/agents/clients go test ./tools/agents
//
// Without REWIND_AGENTS every test skips, saying so; with it, a missing client fails. Also:
//
//	REWIND_AGENTS_KEEP=1            keep a failed test's folder (home, project, store) for a look
//	REWIND_AGENTS_PAYLOADS=DIR      keep every kind of hook payload the clients sent, in DIR/<client>/
//	REWIND_AGENTS_TRANSCRIPTS=DIR   keep one session's transcript per client, as testdata/transcripts
//
// Under REWIND_CI=1 a missing strace fails the tests that trace the clients' connections.
//
// # The clients
//
// tools/agents/clients/package.json pins each client's version; its package-lock.json was made
// with `npx npm@11.13.0 install --package-lock-only` in that folder: cline 3.0.65 names five
// platform packages that were never published, and npm 11.16 and later leave them out of the
// lock it writes and then refuse that lock in `npm ci`, where 11.13 writes an inert entry for
// each. .ci/run installs the clients once per lock file in ~/.cache/agent-rewind-ci and reuses
// them.
//
// # The world of a run
//
// Env is one test's world in a temporary folder: a home with XDG folders that are not the
// defaults (so a client that hands a hook or an MCP server only part of its environment shows
// as a second store), a project that is a git repository with a commit, a subfolder and a bare
// remote (a `git push` there is an external effect; the remote logs what it received), and
// agent-rewind and agent-rewind-hook built from this checkout (Build, once per test binary) on
// PATH. A client runs with nothing of the test's own environment (Run), in a process group that
// is killed when it ends. The store is read with the real CLI's --json outputs (List, Effects,
// VerifyChain, Rewind, StoreOf), and the project's files are recorded around every tool call
// the model makes (Record, Trees), so a rewind to "before call X" is checked byte for byte.
//
// The clients are set up as docs/agents.md tells a user: the shipped integration files as they
// are (CopyIntegration, InstallCodex, ...), or agent-rewind setup CLIENT, which writes them with
// absolute paths (Setup), and agent-rewind doctor says what it finds wrong (Doctor); each
// client's AfterSetup test checks a session after setup and the problems doctor reports.
//
// The shop command (tools/agents/shop) is the MCP server with external effects the scripts
// call: send_email and create_refund, which the built-in mcp-outbound rule guards, each
// logged to a file outside the project when it really runs.
//
// Each client's setup is a file of its own (claude.go, copilot.go, ...) and so are its tests.
package agents
