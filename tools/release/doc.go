// Command release releases agent-rewind from this checkout: it tags the Go modules at one
// version, builds the static binaries (agent-rewind, and agent-rewind-hook, the guard alone that
// agents' hooks run; for Windows both in one .zip, as agent-rewind.exe and agent-rewind-hook.exe)
// with SHA256SUMS beside them, and the npm packages (@agent-rewind/mcp and one
// package per platform, each carrying both binaries) packed with npm pack.
//
//	go run ./tools/release tag   -version v0.3.0 [-dry-run]
//	go run ./tools/release build -version v0.3.0 [-out dist] [-targets linux/amd64,...]
//	go run ./tools/release npm   -version v0.3.0 [-out dist] [-targets linux/amd64,...]
//
// Modules are released in lockstep and tagged per module (hashchain/v0.3.0, ...): tag makes
// every go.mod require its siblings at the version (never a replace directive), records their
// checksums with go mod tidy against a file proxy of the modules already done (dependency
// order), commits and tags locally; pushing is the maintainer's. proxy writes such a file proxy
// (GOPROXY=file://...) of the checkout, which CI and TestReleaseOffline use as a consumer would.
//
// A short Go program rather than GoReleaser: GoReleaser is a binary to download and a
// configuration language to learn for what here is go build twelve times with fixed flags, a
// checksum file and a few package.json files; this runs offline with the Go toolchain alone.
//
// Builds are reproducible: CGO_ENABLED=0, -trimpath, -buildvcs=false and the version and commit
// passed with -ldflags -X, so two builds of one commit in different folders are byte-identical
// (TestReproducible); the Windows .zip holds its files with one fixed time, so it is too. The
// targets are Linux, macOS and Windows, each on x64 and arm64.
package main
