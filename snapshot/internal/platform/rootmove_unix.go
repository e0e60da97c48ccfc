//go:build linux || darwin

package platform

import "os"

// RenameInRoot renames old over new in root (rename(2) replaces an open file as any other).
func RenameInRoot(root *os.Root, old, new string) error {
	return root.Rename(old, new)
}

// RemoveInRoot removes name in root, never following a symlink (unlink or rmdir).
func RemoveInRoot(root *os.Root, name string) error {
	return root.Remove(name)
}
