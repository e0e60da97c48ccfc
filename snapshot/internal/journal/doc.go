// Package journal is the file StateDir/journal (FORMAT.md, "Journal"): present only while a
// rewind, replay or restore of chosen paths is in flight, naming the target and the safety
// checkpoint, so that the next Open (or writer) can finish or undo it. It reads and writes the
// file; recovering is the snapshot package's, which restores.
package journal
