// Package platform is what the snapshot store asks of the operating system, behind one small
// API that each system implements in its own files: the stat the stat cache compares (Stat,
// Lstat, Fstat, FileInfoStat, Links), listing a directory and statting its entries through one
// descriptor (OpenDir, LstatAt, ReadlinkAt, CloseDir), the writers' lock (Lock, TryLock,
// ErrBusy), and flushing (SyncFS, StartWriteback).
//
// Linux (stat_linux.go, readdir_linux.go: raw *at system calls, syncfs(2), sync_file_range(2))
// and macOS (stat_darwin.go, readdir_darwin.go: path-based stat, sync(2)) implement it; the
// files shared by both are named _unix and carry a build tag. A Windows port adds _windows.go
// files with the same functions.
//
// A restore changes only what it verified, through an os.Root (rootopen_unix.go,
// filetype_unix.go, notempty_unix.go): opens that never follow a final symlink nor block on a
// FIFO (OpenInRoot, OpenDirInRoot, CreateInRoot, IsSymlinkRefused), a stat's file type
// (Stat.IsDir, Stat.IsRegular), and a directory that is not empty (IsNotEmpty).
package platform
