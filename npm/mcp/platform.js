// Which platform package carries the native agent-rewind binaries for this machine. Shared by
// the launcher (launcher.js) and the postinstall step (install.js); no dependencies.
"use strict";

const path = require("path");

// The platforms with a prebuilt binary, as process.platform-process.arch. tools/release builds
// exactly these (Go's linux/amd64 is npm's linux-x64, windows/amd64 win32-x64) and writes one
// package for each.
const SUPPORTED = ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "win32-arm64", "win32-x64"];

// BINARIES are the native programs each platform package carries in bin/: agent-rewind, and
// agent-rewind-hook, the guard alone, which agents' hooks run before and after every tool call.
const BINARIES = ["agent-rewind", "agent-rewind-hook"];

// binaryPath returns the path of the native binary name (default agent-rewind; name.exe on
// Windows, which runs a program by that name), or throws an Error whose message says which
// platform this is and what to do instead.
function binaryPath(name = "agent-rewind") {
  const platform = `${process.platform}-${process.arch}`;
  if (!SUPPORTED.includes(platform)) {
    throw new Error(
      `agent-rewind: no prebuilt binary for this platform (${platform}); there are binaries for ${SUPPORTED.join(", ")}.` +
        " Elsewhere build it from source with Go 1.26 or newer: go install github.com/agent-rewind/rewind/cli/cmd/agent-rewind@latest"
    );
  }
  const pkg = `@agent-rewind/mcp-${platform}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(
      `agent-rewind: the package ${pkg}, which carries the binary for ${platform}, is not installed. ` +
        "npm skips it when optional dependencies are omitted (--omit=optional, --no-optional) or when a lockfile was made on another platform: " +
        `reinstall without omitting optional dependencies, or add it yourself: npm install ${pkg}`
    );
  }
  return path.join(dir, "bin", process.platform === "win32" ? `${name}.exe` : name);
}

module.exports = { SUPPORTED, BINARIES, binaryPath };
