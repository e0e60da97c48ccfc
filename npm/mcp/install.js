// postinstall: put the native binary in place of the launcher (bin/agent-rewind), so that the
// agent-rewind npm links onto PATH runs with no node process in between (a hook that runs on
// every tool call pays node's start-up otherwise). Any failure keeps the launcher, which works
// the same, only slower to start; installs with scripts disabled keep it too.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const { binaryPath } = require("./platform.js");

const launcher = path.join(__dirname, "bin", "agent-rewind");
const tmp = `${launcher}.native-${process.pid}`;

try {
  fs.copyFileSync(binaryPath(), tmp);
  fs.chmodSync(tmp, 0o755);
  // Run the copy before the swap: a binary that cannot execute here (noexec mount, wrong
  // architecture under emulation) must not replace a launcher that reports the problem.
  const out = execFileSync(tmp, ["--json", "version"], { encoding: "utf8", timeout: 30000, stdio: ["ignore", "pipe", "pipe"] });
  if (!JSON.parse(out).version) throw new Error(`unexpected version output: ${out}`);
  fs.renameSync(tmp, launcher);
} catch (err) {
  try {
    fs.unlinkSync(tmp);
  } catch {}
  process.stderr.write(`agent-rewind: keeping the node launcher (${err.message.split("\n")[0]})\n`);
}
