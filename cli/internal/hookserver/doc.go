// Package hookserver is the guard server: a per-user process that runs the guard
// (hook.Guard) for agent-rewind-hook, the thin client agents' hooks start before and after every
// tool call, so that the process an agent starts does little more than start, and the guard's
// work (the decision, the workspace's choice, the automatic checkpoint with the watcher's hint)
// runs in a process that is already warm.
//
// It listens on hookwire.Socket (hook-server/sock in the state base; its folder is mode 0700,
// and it refuses to run in one another user could change: cli/internal/trust) and serves only
// connections whose peer has its own uid (SO_PEERCRED, LOCAL_PEERCRED on macOS), as its
// clients trust only a server of their own uid.
// A request carries the client's arguments, working directory, environment, umask and standard
// input (hookwire); the server answers with exactly what hook.Guard writes and returns, or
// "fall back" without doing anything when the request's build version, its environment (every
// variable the guard or the store reads, see envDiffers) or its umask differ from the server's,
// in which case the client runs the full guard itself. Correctness never depends on it: served
// or not, the answers, chain records, ledger, checkpoints and calls.jsonl are the same.
//
// One server runs per state base (hook-server/lock). It exits after an idle period, when its
// socket file is removed or replaced, when asked ("agent-rewind hook-server stop"), and when a
// client of another build calls (an upgrade replaces it).
package hookserver
