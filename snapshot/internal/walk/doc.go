// Package walk lists the live workspace: every path under the root in byte order of its
// slash-separated path (Walk, or a Walker over chosen folders), each with its manifest entry and
// its lstat (LiveEntry), leaving out the state directory and what the exclusion rules match
// (Ignore, parsed from .rewindignore with gitignore's syntax; Rules, the union of several). It reads through the platform
// package's one-descriptor directory listing and reads no file's content: hashing and the stat
// cache, which decide what changed, are the snapshot package's.
package walk
