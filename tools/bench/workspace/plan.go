package workspace

import (
	"fmt"
	"math"
	"path"
	"strconv"
)

// kind is the type of a planned entry.
type kind byte

const (
	kindText   kind = 'f' // small text file (mode 0644, or 0755 for a script)
	kindBinary kind = 'b' // large incompressible file
	kindLink   kind = 'l' // symlink
)

// file is one planned regular file or symlink.
type file struct {
	path   string // slash-separated, relative to the root
	kind   kind
	exec   bool
	size   int64
	seed   uint64 // content seed, derived from the shape's seed and the file's index
	target string // symlink target (relative)
}

// plan is the whole tree, decided before anything is written.
type plan struct {
	dirs      []string // every directory, parents before children (the root is not listed)
	emptyDirs int
	files     []file
}

// Sizes of small text files are log-uniform over [minText, maxText].
const (
	minText  = 64
	maxText  = 64 << 10
	maxDepth = 6
)

// makePlan decides every path, size, mode and link target from s alone.
func makePlan(s Shape) plan {
	r := splitmix{s: s.Seed}
	var p plan

	// Directories: each new one hangs under an earlier one that is not too deep, preferring
	// recent ones so that the tree nests rather than fanning out flat under the root.
	nDirs := max(1, s.Files/12)
	depth := []int{0} // depth[i] of dirPath[i]; index 0 is the root
	dirPath := []string{""}
	for i := range nDirs {
		parent := max(0, len(dirPath)-1-r.intn(8))
		if r.intn(4) == 0 {
			parent = r.intn(len(dirPath))
		}
		if depth[parent] >= maxDepth {
			parent = 0
		}
		name := dirWords[r.intn(len(dirWords))] + strconv.Itoa(i)
		dp := path.Join(dirPath[parent], name)
		dirPath = append(dirPath, dp)
		depth = append(depth, depth[parent]+1)
		p.dirs = append(p.dirs, dp)
	}
	// Empty directories: leaves that receive nothing.
	p.emptyDirs = max(2, s.Files/2500)
	for i := range p.emptyDirs {
		parent := dirPath[r.intn(len(dirPath))]
		p.dirs = append(p.dirs, path.Join(parent, "empty-"+strconv.Itoa(i)))
	}

	nLinks := max(1, s.Files/100)
	nRegular := s.Files - nLinks
	nBinary := max(1, nRegular/100)
	nText := nRegular - nBinary

	// Small text files first, then the large binaries share whatever bytes remain.
	var textTotal int64
	logMin, logMax := math.Log(minText), math.Log(maxText)
	for i := range nText {
		size := int64(math.Exp(logMin + r.float()*(logMax-logMin)))
		exec := r.intn(50) == 0
		ext := textExts[r.intn(len(textExts))]
		if exec {
			ext = ".sh"
		}
		dir := dirPath[r.intn(len(dirPath))]
		name := fileWords[r.intn(len(fileWords))] + "_" + strconv.Itoa(i) + ext
		p.files = append(p.files, file{path: path.Join(dir, name), kind: kindText, exec: exec, size: size})
		textTotal += size
	}
	// Keep at least a third of the bytes for the large files (where the file count allows): if the
	// requested total is small for this many files, shrink each text file's size above the
	// minimum in proportion.
	if limit := max(s.Bytes*2/3, int64(nText)*minText); textTotal > limit {
		base := int64(nText) * minText
		f := float64(limit-base) / float64(textTotal-base)
		textTotal = 0
		for i := range p.files {
			p.files[i].size = minText + int64(float64(p.files[i].size-minText)*f)
			textTotal += p.files[i].size
		}
	}
	weights := make([]float64, nBinary)
	var wsum float64
	for i := range weights {
		weights[i] = math.Exp(r.float() * 3) // sizes spread over a factor of e³ ≈ 20
		wsum += weights[i]
	}
	remaining := max(0, s.Bytes-textTotal)
	for i, w := range weights {
		size := int64(float64(remaining) * w / wsum)
		if i == nBinary-1 {
			size = remaining // the last one takes the rounding, so the total is exact
		}
		remaining -= size
		dir := dirPath[r.intn(len(dirPath))]
		name := fileWords[r.intn(len(fileWords))] + "_" + strconv.Itoa(i) + binaryExts[r.intn(len(binaryExts))]
		p.files = append(p.files, file{path: path.Join(dir, name), kind: kindBinary, size: size})
	}

	// Symlinks: relative, to files (mostly), directories, or nothing at all (dangling).
	for i := range nLinks {
		dir := dirPath[r.intn(len(dirPath))]
		var target string
		switch v := r.intn(20); {
		case v == 0:
			target = "missing-target-" + strconv.Itoa(i)
		case v <= 2:
			target = relative(dir, dirPath[r.intn(len(dirPath))])
		default:
			target = relative(dir, p.files[r.intn(nRegular)].path)
		}
		p.files = append(p.files, file{path: path.Join(dir, fmt.Sprintf("link_%d", i)), kind: kindLink, target: target})
	}
	for i := range p.files {
		p.files[i].seed = derive(s.Seed, i)
	}
	return p
}

// relative returns the slash path of to as seen from directory from (both relative to the root).
func relative(from, to string) string {
	fs, ts := splitPath(from), splitPath(to)
	i := 0
	for i < len(fs) && i < len(ts) && fs[i] == ts[i] {
		i++
	}
	var parts []string
	for range fs[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, ts[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return path.Join(parts...)
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	var out []string
	for p != "" {
		d, f := path.Split(p)
		out = append([]string{f}, out...)
		p = path.Clean(d)
		if p == "." || p == "/" {
			break
		}
	}
	return out
}

var (
	dirWords   = []string{"src", "lib", "internal", "pkg", "cmd", "test", "docs", "api", "core", "util", "ui", "components", "server", "client", "models", "handlers", "config", "scripts", "assets", "vendor", "node_modules", "dist", "build", "fixtures", "examples", "tools"}
	fileWords  = []string{"index", "main", "app", "server", "client", "handler", "model", "view", "store", "router", "config", "types", "helpers", "parser", "lexer", "format", "render", "cache", "queue", "worker", "auth", "session", "user", "order", "payment", "invoice", "report", "schema", "migrate", "seed", "README", "CHANGELOG", "LICENSE", "package", "module", "test", "spec", "bench", "mock", "fixture"}
	textExts   = []string{".go", ".ts", ".tsx", ".js", ".json", ".md", ".txt", ".py", ".css", ".html", ".yaml", ".toml", ".rs", ".c", ".h"}
	binaryExts = []string{".png", ".jpg", ".woff2", ".tar.gz", ".zip", ".wasm", ".bin", ".pdf", ".sqlite"}
)
