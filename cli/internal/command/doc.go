// Package command is agent-rewind's command line: one kong command struct per file, each with a
// Run method that receives an *Env (the global flags and the process's standard streams).
//
// Exit codes: 0 ok, 1 error, 2 refused (a guard refusal), 80 a usage error (kong's). With --json,
// every command writes exactly one JSON document to stdout: its result, or on failure
// {"error": "...", "exitCode": N}.
package command
