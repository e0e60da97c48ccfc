//go:build !windows

package manifest

// ModeBitsKept are the permission bits a file on this system keeps: every one of 07777.
const ModeBitsKept = 0o7777
