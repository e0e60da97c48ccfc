package check

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// chunked checks content h, stored in chunks, of the given size: its chunk list parses and
// gives that size, every chunk is stored with its listed size, and with ReadData every chunk
// hashes to its name and the chunks together to h. It returns the problem's kind (empty when
// there is none), where it is when not in the list itself, and what it is.
func (c *checker) chunked(h Hash, size int64, packed map[Hash]location) (kind, where, what string) {
	chunks, total, err := c.Objects.ReadChunkList(h)
	if err != nil {
		var ce *objects.CorruptError
		if errors.As(err, &ce) {
			return "chunklist-corrupt", "", ce.Reason
		}
		return "chunklist-corrupt", "", err.Error()
	}
	if total != size {
		return "chunklist-corrupt", "", fmt.Sprintf("its chunk list adds up to %d bytes, the manifest says %d", total, size)
	}
	var off int64
	for i, ch := range chunks {
		at := fmt.Sprintf("chunk %d of %d (%s, bytes %d to %d)", i+1, len(chunks), ch.Hash, off, off+ch.Size)
		loose := c.Objects.Path(ch.Hash)
		got := int64(-1)
		if fi, err := os.Lstat(loose); err == nil {
			got = fi.Size()
		} else if loc, ok := packed[ch.Hash]; ok {
			got, loose = loc.Size, fmt.Sprintf("%s (offset %d)", loc.pack, loc.Off)
		} else {
			return "chunk-missing", "", at + " is stored neither loose nor in a pack"
		}
		if got != ch.Size {
			return "chunk-corrupt", c.rel(loose), fmt.Sprintf("%s is stored with %d bytes", at, got)
		}
		off += ch.Size
	}
	if !c.Options.ReadData {
		return "", "", ""
	}
	// Each chunk's reader checks it against its name, the whole one the chunks against h.
	r, _, err := c.Objects.OpenChunked(h)
	if err == nil {
		_, err = io.Copy(io.Discard, r)
		r.Close()
	}
	var ce *objects.CorruptError
	switch {
	case err == nil:
		return "", "", ""
	case errors.As(err, &ce) && ce.Path == c.Objects.ListPath(h):
		return "chunklist-corrupt", "", ce.Reason
	case errors.As(err, &ce):
		return "chunk-corrupt", c.rel(ce.Path), ce.Reason
	}
	return "chunk-corrupt", "", err.Error()
}
