// The node launcher of bin/agent-rewind and bin/agent-rewind-hook: runs the native binary of
// that name from the platform package npm installed beside this one and passes arguments,
// standard streams, signals and the exit status through untouched. On Linux and macOS the
// postinstall step (install.js) normally puts the binaries themselves in bin/ instead, and the
// launchers run when install scripts were disabled (npm --ignore-scripts); on Windows they
// always run: npm's shims there (agent-rewind.cmd for cmd, .ps1 for PowerShell, a sh script for
// Git Bash) run `node bin/agent-rewind`, which spawns bin\agent-rewind.exe of the platform package.
"use strict";

const { spawn } = require("child_process");
const { binaryPath } = require("./platform.js");

module.exports = function launch(name) {
  let bin;
  try {
    bin = binaryPath(name);
  } catch (err) {
    process.stderr.write(err.message + "\n");
    process.exit(1);
  }

  // stdio "inherit" hands the binary these very file descriptors: nothing is copied or buffered.
  const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });

  // A signal sent to the launcher (an MCP client stopping its server, kill, a closed terminal)
  // goes on to the binary, which decides what it means; the launcher exits the way the binary did.
  // A terminal's Ctrl-C reaches the binary twice (from the terminal and from here): agent-rewind
  // treats a second interrupt like the first.
  //
  // Windows has no signals to forward: Ctrl-C, Ctrl-Break and closing the console window reach
  // every process of the console, the binary included, and child.kill() there would end it at
  // once (TerminateProcess), not ask it to stop. There the launcher only outlives them (node
  // would exit at once, leaving the binary running behind a prompt) and exits as the binary does.
  const windows = process.platform === "win32";
  const caught = windows ? ["SIGINT", "SIGBREAK", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGWINCH"];
  const forward = windows ? () => {} : (sig) => child.kill(sig);
  for (const sig of caught) process.on(sig, forward);

  child.on("error", (err) => {
    process.stderr.write(`agent-rewind: cannot run ${bin}: ${err.message}. Reinstall @agent-rewind/mcp.\n`);
    process.exit(1);
  });

  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so whoever waits on the launcher sees what the binary got.
      for (const sig of caught) process.removeListener(sig, forward);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code);
  });
};
