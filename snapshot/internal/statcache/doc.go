// Package statcache is the stat cache (StateDir/index and its log index-log, FORMAT.md "Index"):
// for every file hashed, its lstat then and its content hash, and for every directory whose tree
// was encoded, its lstat and the tree's hash, so that a checkpoint reads only what changed
// (Index.Clean, with git's racy-clean rule: an entry not older than its file is read again).
// Load reads it (LoadLazy leaves the index encoded, read in place through a Cursor), Encode and
// AppendLog write it, Changes compares a cache with a capture as both stream by. It is a cache:
// a damaged file is reported and ignored, never trusted.
package statcache
