// Command release builds agent-rewind's release artifacts from this checkout: the static binaries
// with SHA256SUMS beside them, and the npm packages (@agent-rewind/mcp and one package per
// platform) packed with npm pack.
//
//	go run ./tools/release build -version v0.3.0 [-out dist] [-targets linux/amd64,...]
//	go run ./tools/release npm   -version v0.3.0 [-out dist] [-targets linux/amd64,...]
//
// A short Go program rather than GoReleaser: GoReleaser is a binary to download and a
// configuration language to learn for what here is go build four times with fixed flags, a
// checksum file and a few package.json files; this runs offline with the Go toolchain alone.
//
// Builds are reproducible: CGO_ENABLED=0, -trimpath, -buildvcs=false and the version and commit
// passed with -ldflags -X, so two builds of one commit in different folders are byte-identical
// (TestReproducible). Only Linux and macOS are targets: the snapshot store and the effect ledger
// need flock and O_NOFOLLOW, and a build for another system stops with a message saying so.
package main
