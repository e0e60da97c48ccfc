// Package detach starts a program that outlives its caller: a guard server, a change watcher or
// a first checkpoint that an agent's hook starts and must not wait for. On Unix the child gets
// a session of its own (setsid), so the terminal's hang-up and the caller's process group's
// signals do not reach it; on Windows a process group of its own with no console
// (CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS), so the caller's Ctrl+C and console do not.
// Standard input, output and error are the caller's to set (nil: the null device).
package detach
