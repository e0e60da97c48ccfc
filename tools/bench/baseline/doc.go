// Package baseline holds the real alternatives that agent-rewind's figures are ratios against,
// independent of agent-rewind's own modules:
//
//   - ShadowGit: the checkpointing technique of Cline and Gemini CLI. A git repository whose
//     GIT_DIR lives outside the workspace and whose work tree is the workspace; a checkpoint is
//     "git add -A && git commit", a restore is "git reset --hard <rev> && git clean -fdq".
//   - the bare stat walk: visit every entry of the tree and lstat it, which is the least any
//     checkpoint that notices every change must do. Two ways, both measured: find(1) as a child
//     process, and StatWalk (filepath.WalkDir plus lstat) run in a child process by the bench
//     command (its hidden "statwalk" subcommand).
//   - the process-start floor: running true(1).
//
// Every git invocation ignores the user's and the system's git configuration, names its own
// committer, and has automatic garbage collection off, so that a background "git gc --auto" never
// lands inside another measurement.
package baseline
