package platform

import (
	"os"
	"syscall"
	"unsafe"
)

// MapFile maps the first size bytes of f for reading (a read-only view of a file mapping), so
// that a search of a large file (check's salvage of a pack) reads it through the cache without
// copying it; unmap releases the view, and f may be closed before (the view keeps the mapping).
// An empty file maps to no bytes: Windows refuses to map zero bytes.
func MapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	m, err := syscall.CreateFileMapping(syscall.Handle(f.Fd()), nil, syscall.PAGE_READONLY, uint32(size>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, &os.PathError{Op: "CreateFileMapping", Path: f.Name(), Err: err}
	}
	defer syscall.CloseHandle(m) // the view holds the mapping open
	addr, err := syscall.MapViewOfFile(m, syscall.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, &os.PathError{Op: "MapViewOfFile", Path: f.Name(), Err: err}
	}
	// addr is memory the system mapped, not Go's: read it as a pointer without vet's uintptr rule.
	data = unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size)
	return data, func() { syscall.UnmapViewOfFile(addr) }, nil
}
