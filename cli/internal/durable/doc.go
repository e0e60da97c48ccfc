// Package durable writes files so that what a caller is told was written survives a crash:
// through a temporary file in the same directory, fsync, rename, and an fsync of the directory.
//
// The leaf modules each carry their own few lines of this (they import no sibling); the cli
// module's packages share this one.
package durable
