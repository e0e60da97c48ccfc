// Preloaded (node --require, or NODE_OPTIONS) by TestNPMWindowsPackage: makes this node say it
// runs on Windows, as the npm package's launcher sees it there (process.platform win32,
// process.arch x64), and runs a .exe it spawns under Wine ($REWIND_WINE_RUN, tools/wine/run), as
// Windows itself would run it. Nothing else changes: the launcher's own code decides which file
// to run, with which arguments and streams, and what to exit with.
"use strict";

Object.defineProperty(process, "platform", { value: "win32" });
Object.defineProperty(process, "arch", { value: "x64" });

const cp = require("child_process");
const spawn = cp.spawn;
cp.spawn = (file, args, opts) => (file.endsWith(".exe") ? spawn(process.env.REWIND_WINE_RUN, [file, ...args], opts) : spawn(file, args, opts));
