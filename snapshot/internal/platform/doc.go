// Package platform is what the snapshot store asks of the operating system, behind one small
// API that each system implements in its own files: the stat the stat cache compares (Stat,
// Lstat, Fstat, FileInfoStat, Links), listing a directory and statting its entries through one
// descriptor (OpenDir, LstatAt, ReadlinkAt, CloseDir), the writers' lock (Lock, TryLock,
// ErrBusy), flushing (SyncFS, StartWriteback), and what a restore needs to change only what it
// verified: opens that never follow a final symlink nor block on a FIFO (OpenNoFollow,
// OpenDirNoFollow, CreateNoFollow, IsSymlinkRefused), a stat's file type (Stat.IsDir,
// Stat.IsRegular), and a directory that is not empty (IsNotEmpty).
//
// Linux (stat_linux.go, readdir_linux.go: raw *at system calls, syncfs(2), sync_file_range(2))
// and macOS (stat_darwin.go, readdir_darwin.go: path-based stat, sync(2)) implement it; the
// files shared by both are named _unix and carry a build tag. A Windows port adds _windows.go
// files with the same functions.
package platform
