//go:build linux || darwin

package platform

import (
	"os"
	"syscall"
)

// MapFile maps the first size bytes of f for reading (mmap(2), shared), so that a search of a
// large file (check's salvage of a pack) reads it through the page cache without copying it;
// unmap releases the mapping, and f may be closed before. An empty file maps to no bytes. The
// file must not shrink while it is mapped: a read past its end would fault.
func MapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return data, func() { syscall.Munmap(data) }, nil
}
