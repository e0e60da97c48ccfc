package workspace

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// listing accumulates the lines whose hash identifies a tree (see the package doc).
type listing struct{ lines []listingLine }

type listingLine struct{ path, text string }

func (l *listing) add(typ byte, mode fs.FileMode, size int64, sum, p string) {
	if sum == "" {
		sum = "-"
	}
	l.lines = append(l.lines, listingLine{p, fmt.Sprintf("%c %04o %d %s %s\n", typ, mode.Perm(), size, sum, p)})
}

// sum returns the hex SHA-256 of the lines sorted by path.
func (l *listing) sum() string {
	slices.SortFunc(l.lines, func(a, b listingLine) int { return cmp.Compare(a.path, b.path) })
	h := sha256.New()
	for _, x := range l.lines {
		io.WriteString(h, x.text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Listing reads the tree under root and returns its listing hash, computed the same way as
// Generate's (see the package doc). Entries whose name is in skip (for example ".rewind") are
// left out with everything below them. Sockets, FIFOs and devices are an error: the generator
// never makes them.
func Listing(root string, skip ...string) (string, error) {
	var l listing
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if slices.Contains(skip, d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch t := info.Mode().Type(); {
		case t == 0:
			sum, err := fileSum(p)
			if err != nil {
				return err
			}
			l.add('f', info.Mode(), info.Size(), sum, rel)
		case t == fs.ModeDir:
			l.add('d', info.Mode(), 0, "", rel)
		case t == fs.ModeSymlink:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256([]byte(target))
			l.add('l', 0o777, int64(len(target)), hex.EncodeToString(s[:]), rel)
		default:
			return fmt.Errorf("workspace: %s is a %v, which the listing does not cover", p, t)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return l.sum(), nil
}

func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
