// postinstall: put the native binaries in place of their launchers (bin/agent-rewind,
// bin/agent-rewind-hook), so that what npm links onto PATH runs with no node process in between
// (a hook that runs on every tool call pays node's start-up otherwise). Any failure keeps that
// launcher, which works the same, only slower to start; installs with scripts disabled keep both.
"use strict";

const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const { BINARIES, binaryPath } = require("./platform.js");

// runs reports whether the copy at file executes here and is the program name: agent-rewind
// answers "--json version"; agent-rewind-hook, which runs only the guard, answers any other
// command line with exit 2 and its usage, naming itself.
function runs(file, name) {
  const args = name === "agent-rewind" ? ["--json", "version"] : ["version"];
  const r = spawnSync(file, args, { encoding: "utf8", timeout: 30000, stdio: ["ignore", "pipe", "pipe"] });
  if (r.error) throw r.error;
  if (name === "agent-rewind") {
    if (r.status !== 0 || !JSON.parse(r.stdout).version) throw new Error(`unexpected version output: ${r.stdout}${r.stderr}`);
  } else if (r.status !== 2 || !r.stderr.startsWith(`${name} `)) {
    throw new Error(`unexpected answer (exit ${r.status}): ${r.stderr}`);
  }
}

for (const name of BINARIES) {
  const launcher = path.join(__dirname, "bin", name);
  const tmp = `${launcher}.native-${process.pid}`;
  try {
    fs.copyFileSync(binaryPath(name), tmp);
    fs.chmodSync(tmp, 0o755);
    // Run the copy before the swap: a binary that cannot execute here (noexec mount, wrong
    // architecture under emulation) must not replace a launcher that reports the problem.
    runs(tmp, name);
    fs.renameSync(tmp, launcher);
  } catch (err) {
    try {
      fs.unlinkSync(tmp);
    } catch {}
    process.stderr.write(`${name}: keeping the node launcher (${err.message.split("\n")[0]})\n`);
  }
}
