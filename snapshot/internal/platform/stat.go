package platform

// Stat is what the stat cache compares: enough to tell that a file changed without reading it.
// The stat cache stores and compares its fields as they are. On Unix fromStat (stat_linux.go,
// stat_darwin.go) fills it from each system's Stat_t; on Windows fromHandle fills it from the
// file's handle: Windows has no st_mode, so Mode is made of POSIX type bits and permission bits
// from the read-only attribute (modeOf), and Ino is the file ID on its volume.
type Stat struct {
	Mode  uint32 // st_mode: type and permission bits (on Windows 0o644, 0o444, 0o755 or 0o555)
	Size  int64
	Mtime int64 // ns since the epoch: the last write
	Ctime int64 // ns since the epoch: the last change (on Windows, attributes and renames included)
	Ino   uint64
}
