package snapshot

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// BenchmarkParseManifest decodes a 50,000-entry manifest, as every rewind does for its target.
func BenchmarkParseManifest(b *testing.B) {
	var es []Entry
	for d := range 2500 {
		dir := fmt.Sprintf("d%02d/e%02d/f%02d", d/100, d/10%10, d%10)
		if d%100 == 0 {
			es = append(es, Entry{Path: fmt.Sprintf("d%02d", d/100), Type: TypeDir, Mode: 0o755})
		}
		if d%10 == 0 {
			es = append(es, Entry{Path: fmt.Sprintf("d%02d/e%02d", d/100, d/10%10), Type: TypeDir, Mode: 0o755})
		}
		es = append(es, Entry{Path: dir, Type: TypeDir, Mode: 0o755})
		for f := range 20 {
			p := fmt.Sprintf("%s/file%05d.txt", dir, d*20+f)
			es = append(es, Entry{Path: p, Type: TypeFile, Mode: 0o644, Size: int64(200 + f), Blob: sha256.Sum256([]byte(p))})
		}
	}
	data := EncodeManifest(es)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		got, err := ParseManifest(data)
		if err != nil || len(got) != len(es) {
			b.Fatalf("%d entries, %v", len(got), err)
		}
	}
}
