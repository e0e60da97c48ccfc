// The npm package's end-to-end client: the official TypeScript MCP SDK (Client +
// StdioClientTransport) drives the server command it is given, as an agent's client would:
// checkpoint, a change made by a shell command, rewind to the checkpoint, then guard_effect twice
// with one key. It prints one JSON document on stdout:
//
//   {"checkpoint": RESULT, "rewind": RESULT, "guard": [RESULT, RESULT]}
//
// where RESULT is {"isError": bool, "structuredContent": {...} | null, "text": "..."}.
//
// Usage: node npmclient.mjs --cwd DIR --shell SCRIPT -- COMMAND [ARG...]
// The SDK is resolved from ./node_modules (the test links mcpserver/testdata/tsclient's there).
// Exit status: 0 on success, 1 with a message on stderr on any failure.

import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0 || i >= sep) throw new Error(`npmclient: ${name} is required`);
  return argv[i + 1];
};
const cwd = opt("--cwd");
const shell = opt("--shell");
const [command, ...args] = argv.slice(sep + 1);

const summarize = (r) => ({
  isError: r.isError === true,
  structuredContent: r.structuredContent ?? null,
  text: (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n"),
});

const transport = new StdioClientTransport({ command, args, cwd, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "agent-rewind-npmclient", version: "1.0.0" });
await client.connect(transport);
try {
  const out = {};
  out.checkpoint = summarize(await client.callTool({ name: "checkpoint", arguments: { label: "before the shell change" } }));
  execFileSync("sh", ["-c", shell], { cwd, stdio: "inherit" });
  const id = out.checkpoint.structuredContent?.id;
  out.rewind = summarize(await client.callTool({ name: "rewind", arguments: { id } }));
  const guard = { key: "deploy:npm:1", payload: { from: "npmclient" }, description: "a test effect" };
  out.guard = [
    summarize(await client.callTool({ name: "guard_effect", arguments: guard })),
    summarize(await client.callTool({ name: "guard_effect", arguments: guard })),
  ];
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await client.close();
}
