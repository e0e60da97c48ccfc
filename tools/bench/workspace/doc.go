// Package workspace generates the benchmark workspace: a deterministic tree shaped like a coding
// agent's working copy (the snapshot issue's 50,000 files, about 1.4 GB), and deterministic sets of
// "ten changed files" for incremental checkpoint and rewind measurements.
//
// The same Shape (files, bytes, seed) always yields a byte-identical tree: the same paths, contents,
// modes and symlink targets (modification times are not part of it). Generate returns a listing
// hash that commits to all of that, and the benchmark artifact records it with the Shape.
//
// The shape, for Files = F and Bytes = B:
//
//   - about F/12 directories nested up to 6 deep, plus a few empty ones (max(2, F/2500));
//   - 1% of F symlinks (relative; most to files, some to directories, a few dangling);
//   - of the regular files, 1% large binary files (incompressible, like images and archives) that
//     together make up whatever B the small files leave, and the rest small text files (code-like
//     lines, log-uniform sizes from 64 B to 64 KiB, mean about 9.4 KiB), 2% of them executable
//     shell scripts (mode 0755);
//   - every regular file's content is unique (each starts with its own header line).
//
// The listing hash is the SHA-256 of the sorted lines
//
//	<type> <mode octal> <size> <sha256 of content, or of the link target> <path>\n
//
// with type one of d (directory), f (regular file), l (symlink) and paths slash-separated and
// relative to the root. The root itself is not listed.
package workspace
