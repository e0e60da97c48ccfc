// A small MCP client built on the official TypeScript SDK (Client + StdioClientTransport), used by
// agent-rewind's tests as a client nobody on this project wrote. It starts the server command,
// lists the tools, calls checkpoint once and guard_effect twice with one key, then list (when the
// profile has it) and, with --rewind, rewind, and prints one JSON document on stdout:
//
//   {"server": {name, version}, "instructions": "...",
//    "tools": [{"name", "annotations", "hasOutputSchema"}, ...],
//    "checkpoint": RESULT, "guard": [RESULT, RESULT], "list": RESULT | null, "rewind": RESULT | null}
//
// where RESULT is {"isError": bool, "structuredContent": {...} | null, "text": "..."}. The SDK
// validates each structuredContent against the tool's outputSchema (with ajv) and throws when it
// does not match, so a schema the server gets wrong fails here.
//
// Usage: node client.mjs [--cwd DIR] [--key KEY] [--label LABEL] [--rewind ID] -- COMMAND [ARG...]
//   --cwd    the server's working directory, i.e. the workspace (default: this process's)
//   --key    the guard_effect key (default "tsclient:demo-effect")
//   --label  the checkpoint label (default "tsclient")
//   --rewind a checkpoint or tool call id to rewind to last (default: no rewind)
// The server inherits this process's environment (REWIND_MCP_PROFILE, REWIND_CI, ...).
// Exit status: 0 on success, 1 with a message on stderr on any failure, 2 on a usage error.
//
// The client keeps the server's stdin open until every reply has arrived and only then closes
// (go-sdk issue #1061: a stdio server can drop replies when stdin closes right after requests).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

function usage(message) {
  process.stderr.write(`tsclient: ${message}\nusage: node client.mjs [--cwd DIR] [--key KEY] [--label LABEL] [--rewind ID] -- COMMAND [ARG...]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { cwd: undefined, key: "tsclient:demo-effect", label: "tsclient", rewind: undefined, command: undefined, args: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      i++;
      break;
    }
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--cwd") opts.cwd = value();
    else if (a === "--key") opts.key = value();
    else if (a === "--label") opts.label = value();
    else if (a === "--rewind") opts.rewind = value();
    else usage(`unknown option ${a}`);
  }
  if (i >= argv.length) usage("no server command after --");
  opts.command = argv[i];
  opts.args = argv.slice(i + 1);
  return opts;
}

function summarize(result) {
  const text = (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  return { isError: result.isError === true, structuredContent: result.structuredContent ?? null, text };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const transport = new StdioClientTransport({
    command: opts.command,
    args: opts.args,
    cwd: opts.cwd,
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name: "agent-rewind-tsclient", version: "1.0.0" });
  await client.connect(transport);
  try {
    const out = {
      server: client.getServerVersion() ?? null,
      instructions: client.getInstructions() ?? "",
      tools: [],
    };
    const { tools } = await client.listTools();
    out.tools = tools.map((t) => ({ name: t.name, annotations: t.annotations ?? null, hasOutputSchema: t.outputSchema !== undefined }));
    out.checkpoint = summarize(await client.callTool({ name: "checkpoint", arguments: { label: opts.label } }));
    const guard = { key: opts.key, payload: { from: "tsclient" }, description: "a test effect" };
    out.guard = [
      summarize(await client.callTool({ name: "guard_effect", arguments: guard })),
      summarize(await client.callTool({ name: "guard_effect", arguments: guard })),
    ];
    out.list = tools.some((t) => t.name === "list") ? summarize(await client.callTool({ name: "list", arguments: {} })) : null;
    out.rewind = opts.rewind ? summarize(await client.callTool({ name: "rewind", arguments: { id: opts.rewind } })) : null;
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    await client.close();
  }
}

main().catch((err) => {
  process.stderr.write(`tsclient: ${err?.stack ?? err}\n`);
  process.exit(1);
});
