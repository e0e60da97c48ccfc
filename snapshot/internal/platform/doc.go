// Package platform is what the snapshot store asks of the operating system, behind one small
// API that each system implements in its own files: the stat the stat cache compares (Stat,
// Lstat, Fstat, FileInfoStat, FstatLinks), setting an open file's mode (Fchmod), listing a
// directory and statting its entries through one descriptor (OpenDir, LstatAt, ReadlinkAt,
// CloseDir), the writers' lock (Lock, TryLock, ErrBusy), flushing (SyncFS, ErrNoVolumeFlush,
// OpenToFlush, FlushedByWriter, StartWriteback), mapping a file for reading (MapFile) and opening one that must not be a symbolic link
// (OpenNoFollow).
//
// Linux (stat_linux.go, readdir_linux.go: raw *at system calls, syncfs(2), sync_file_range(2))
// and macOS (stat_darwin.go, readdir_darwin.go: path-based stat, sync(2)) implement it; the
// files shared by both are named _unix and carry a build tag. Windows (the _windows.go files)
// stats through a handle opened as the file itself with only the right to read attributes
// (FileBasicInfo, FileStandardInfo and the file ID): Ino is the file ID on its volume (the walk
// never leaves it), Ctime the change time, Mode POSIX type bits with 0o644 or 0o755 less write
// for the read-only attribute; a symlink is S_IFLNK, any other reparse point (a junction, a cloud
// placeholder) a type of its own that is never followed nor read. What Windows does not give:
// a stat relative to an open folder (LstatAt joins the path), a FileInfo's file ID, change time
// or link count (FileInfoStat is false: FstatLinks asks the handle), an executable bit (Fchmod
// sets only the read-only attribute), a volume flush without administrator rights (SyncFS says
// so: ErrNoVolumeFlush, and the caller fsyncs each file), a flush through a handle that may not
// write (OpenToFlush opens for writing, a folder not at all: NTFS logs its names) and so any
// flush of a read-only file but by its writer (FlushedByWriter).
//
// A restore changes only what it verified, through an os.Root (rootopen_unix.go,
// filetype_unix.go, notempty_unix.go): opens that never follow a final symlink nor block on a
// FIFO (OpenInRoot, OpenDirInRoot, CreateInRoot, IsSymlinkRefused), renames (written through on
// Windows, which has no folder fsync) and removals that on Windows try a file held open by
// another process again briefly and then say so (RenameInRoot, RemoveInRoot, ErrHeldOpen), a
// stat's file type (Stat.IsDir, Stat.IsRegular), and a directory that is not empty
// (IsNotEmpty). Before it changes anything, a restore on a system that cannot hold every name
// (RestrictsNames: Windows) refuses a checkpoint holding such names (WindowsBadNames, pure
// logic tested everywhere).
package platform
