// postinstall: put the native binaries in place of their launchers (bin/agent-rewind,
// bin/agent-rewind-hook), so that what runs has no node process in between (a hook that runs on
// every tool call pays node's start-up otherwise). Any failure keeps that launcher, which works
// the same, only slower to start; installs with scripts disabled keep both.
//
// Not on Windows: npm writes its shims there (agent-rewind.cmd, .ps1 and a sh script) when it
// links the bin, before this script runs, from the launcher's "#!/usr/bin/env node" line, so
// they run `node bin/agent-rewind`: a binary put in its place would be read by node as a script.
// The launchers stay and run bin\agent-rewind.exe of the platform package.
//
// npm links only agent-rewind onto PATH: with a second "bin" entry, `npx -y @agent-rewind/mcp
// mcp` would fail ("could not determine executable to run": npx runs a package's only bin, or
// the one named after the package). A global install gets agent-rewind-hook linked beside it
// here instead; the Claude Code plugin finds it beside agent-rewind either way.
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

for (const name of process.platform === "win32" ? [] : BINARIES) {
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

// linkHook links bin/agent-rewind-hook into the global bin folder, beside npm's agent-rewind,
// unless something that is not this link already has the name.
// Not on Windows, where a symbolic link needs Developer Mode or an administrator and npm's global
// bin folder is the prefix itself, holding shims rather than links.
function linkHook() {
  if (process.platform === "win32" || process.env.npm_config_global !== "true" || !process.env.npm_config_prefix) return;
  const dir = path.join(process.env.npm_config_prefix, "bin");
  const link = path.join(dir, "agent-rewind-hook");
  const target = path.join(__dirname, "bin", "agent-rewind-hook");
  try {
    const old = fs.readlinkSync(link);
    if (!path.resolve(dir, old).endsWith(path.join("@agent-rewind", "mcp", "bin", "agent-rewind-hook"))) return; // not ours
  } catch (err) {
    if (err.code !== "ENOENT") return; // a file of someone else's (EINVAL: not a link)
  }
  const tmp = `${link}.link-${process.pid}`;
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.symlinkSync(path.relative(dir, target), tmp);
    fs.renameSync(tmp, link);
  } catch (err) {
    try {
      fs.unlinkSync(tmp);
    } catch {}
    process.stderr.write(`agent-rewind-hook: not linked into ${dir} (${err.message.split("\n")[0]}); agents' hooks can run agent-rewind guard instead\n`);
  }
}

linkHook();
