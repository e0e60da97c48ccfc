// Package commitlog is the file StateDir/log (FORMAT.md, "Commit log"): an append-only log whose
// records each hold the whole content of the files one commit writes (a checkpoint's pack, its
// index, its manifest, its checkpoint file, the position). A commit appends its record and syncs
// the log once (one fdatasync instead of one per file and folder); the files themselves are then
// written without a sync. The page cache keeps them for every process until the machine stops,
// so the log is read back only after a restart: a log whose boot (Boot, the kernel's boot id)
// is not this one may hold records whose files a power cut lost, and Records gives them back to
// be written again, durably. Settled (the files synced), the log is Reset to its header.
//
// The format, all integers little-endian:
//
//	header  "agent-rewind log 1 " <boot id, 36 bytes> "\n"   (56 bytes)
//	record  "REC1" <u32 payload length> <payload> <u32 CRC-32C of payload> <u32 payload length>
//	payload <u32 file count> { <u16 name length> <name> <u32 data length> <data> }
//
// A record whose CRC does not match, or that ends early, was being written when the writer
// stopped: it never committed, and it and anything after it are ignored. The trailing length
// lets Last find the last record from the end of the file without reading the rest.
package commitlog
