// Package restore makes the workspace equal to a checkpoint's entries, changing only what
// differs and never what it cannot give back. It is the restore of package snapshot without the
// store: the caller loads the entries, takes the safety checkpoint, keeps the journal and
// records the outcome.
//
//   - NewPlan compares the live entries with the wanted ones and keeps apart what a restore never
//     touches (Kept): paths excluded by any of the rules (walk.Rules), paths either state did
//     not capture, and everything under those. SelectPaths narrows both lists to chosen paths
//     first.
//   - Apply carries out a Plan inside an os.Root: removals deepest first, folders parents first,
//     files and symlinks in parallel, each written to a temporary sibling (TempPrefix) and renamed
//     over its path, then folder modes deepest first. It replaces or deletes a live path only if
//     it still has the stat the live capture saw (Options.Seen), creates one only where nothing
//     is, and writes through no symlink (ErrUnsafePath). Contents come from a Source, which
//     verifies them while they are read: a damaged one is never renamed into place.
//   - Flush makes what Apply touched durable; IndexChanges and IndexEntries say what the stat
//     cache holds afterwards.
//
// Re-running a plan made against a fresh capture finishes an interrupted one: that is what the
// caller's journal relies on. The open, stat and rmdir details each system differs in are
// package platform's (OpenInRoot, Stat.IsDir, IsNotEmpty, …).
package restore
