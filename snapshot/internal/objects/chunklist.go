package objects

import (
	"bytes"
	"fmt"
	"strconv"
)

// A chunk list says which chunks, in order, make up a chunked content (FORMAT.md, "Chunked
// contents"). It is stored as chunklists/<hash of the whole content>, so a content is found by
// the same hash whether it is stored whole or in chunks, and a tree entry does not change.

// chunkListMagic starts a chunk list; "1" is its version.
const chunkListMagic = "rewind-chunks 1 "

// ChunkRef is one chunk of a chunked content: the object holding it and its length.
type ChunkRef struct {
	Hash Hash
	Size int64
}

// EncodeChunkList writes the list of a content of the sum of the chunks' sizes.
func EncodeChunkList(chunks []ChunkRef) []byte {
	var total int64
	for _, c := range chunks {
		total += c.Size
	}
	b := make([]byte, 0, 40+len(chunks)*(64+1+8+1))
	b = append(b, chunkListMagic...)
	b = strconv.AppendInt(b, int64(len(chunks)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, total, 10)
	b = append(b, '\n')
	for _, c := range chunks {
		b = append(b, c.Hash.String()...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, c.Size, 10)
		b = append(b, '\n')
	}
	return b
}

// ParseChunkList parses a chunk list strictly and returns its chunks and the content's size:
// header and lines exactly as EncodeChunkList writes them, at least one chunk, each of 1 to
// MaxChunk bytes, sizes adding up to the header's, nothing after the last line.
func ParseChunkList(b []byte) ([]ChunkRef, int64, error) {
	rest, ok := bytes.CutPrefix(b, []byte(chunkListMagic))
	if !ok {
		return nil, 0, fmt.Errorf("does not start with %q", chunkListMagic)
	}
	line, rest, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, 0, fmt.Errorf("header has no end of line")
	}
	countText, sizeText, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return nil, 0, fmt.Errorf("header %q is not %q count size", line, chunkListMagic)
	}
	count, ok := ParseCanonicalInt(string(countText))
	if !ok || count < 1 {
		return nil, 0, fmt.Errorf("chunk count %q is not a positive decimal number", countText)
	}
	total, ok := ParseCanonicalInt(string(sizeText))
	if !ok {
		return nil, 0, fmt.Errorf("size %q is not a decimal number", sizeText)
	}
	// Every line is at least 67 bytes: a count the rest cannot hold is refused before allocating.
	if count > int64(len(rest)/67) {
		return nil, 0, fmt.Errorf("header says %d chunks, the list holds fewer", count)
	}
	chunks := make([]ChunkRef, 0, count)
	var sum int64
	for i := int64(0); i < count; i++ {
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, 0, fmt.Errorf("chunk %d has no end of line", i)
		}
		hashText, sizeText, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, 0, fmt.Errorf("chunk %d: %q is not a hash and a size", i, line)
		}
		h, err := ParseHash(string(hashText))
		if err != nil {
			return nil, 0, fmt.Errorf("chunk %d: %w", i, err)
		}
		size, ok := ParseCanonicalInt(string(sizeText))
		if !ok || size < 1 || size > MaxChunk {
			return nil, 0, fmt.Errorf("chunk %d: size %q is not a decimal number from 1 to %d", i, sizeText, MaxChunk)
		}
		sum += size
		chunks = append(chunks, ChunkRef{h, size})
	}
	if len(rest) != 0 {
		return nil, 0, fmt.Errorf("%d bytes after the last chunk", len(rest))
	}
	if sum != total {
		return nil, 0, fmt.Errorf("chunks add up to %d bytes, the header says %d", sum, total)
	}
	return chunks, total, nil
}
