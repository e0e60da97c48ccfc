// Command release releases agent-rewind from this checkout: it tags the Go modules at one
// version, builds the static binaries (agent-rewind, and agent-rewind-hook, the guard alone that
// agents' hooks run) with SHA256SUMS beside them, and the npm packages (@agent-rewind/mcp and one
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
// configuration language to learn for what here is go build eight times with fixed flags, a
// checksum file and a few package.json files; this runs offline with the Go toolchain alone.
//
// Builds are reproducible: CGO_ENABLED=0, -trimpath, -buildvcs=false and the version and commit
// passed with -ldflags -X, so two builds of one commit in different folders are byte-identical
// (TestReproducible). Only Linux and macOS are targets: the snapshot store and the effect ledger
// need flock and O_NOFOLLOW, and a build for another system stops with a message saying so.
package main
