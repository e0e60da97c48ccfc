package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
)

// zipTime is the modification time of every file in a release .zip: a fixed one, so that two
// builds of one commit make byte-identical archives (1980 is the earliest a zip can say).
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// writeZip writes the files (paths on disk) into a new .zip at path, each under its base name at
// the archive's top level, in the order given: the Windows release archive, which Explorer's
// "Extract All" unpacks into a folder named after it. It is written durably, as SHA256SUMS is.
func writeZip(path string, files ...string) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: filepath.Base(f), Method: zip.Deflate, Modified: zipTime}
		h.SetMode(0o755) // unzip on Linux and macOS keeps the program executable
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return durable.WriteFile(path, buf.Bytes(), 0o644)
}

// readZip returns the contents of the file name in the .zip at path.
func readZip(path, name string) ([]byte, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	f, err := zr.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s holds no %s: %w", path, name, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}
