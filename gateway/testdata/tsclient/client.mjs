// Drives agent-rewind's gateway with the official Anthropic TypeScript SDK (a client nobody
// here wrote): node client.mjs BASE_URL. It prints one JSON report on stdout for the Go test
// (gateway/tsclient_test.go) to check.
import Anthropic from "@anthropic-ai/sdk";

const baseURL = process.argv[2];
if (!baseURL) {
  console.error("usage: node client.mjs BASE_URL");
  process.exit(2);
}
const params = {
  model: "claude-sonnet-5-5",
  max_tokens: 64,
  messages: [{ role: "user", content: "Say hello from the TypeScript SDK." }],
};

const client = new Anthropic({ apiKey: "sk-ant-tsclient-alice", baseURL, maxRetries: 0 });
const report = {};

// The same call twice: a miss, then a replay.
for (const name of ["first", "second"]) {
  const { data, response } = await client.messages.create(params).withResponse();
  report[name] = { replay: response.headers.get("x-rewind-replay"), text: data.content[0].text, usage: data.usage };
}

// Streaming twice, through the SDK's own event parser.
for (const name of ["streamFirst", "streamSecond"]) {
  const { data: stream, response } = await client.messages.create({ ...params, stream: true }).withResponse();
  const events = [];
  let text = "";
  for await (const ev of stream) {
    events.push(ev.type);
    if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
  }
  report[name] = { replay: response.headers.get("x-rewind-replay"), events, text };
}

// Another credential never gets alice's replay.
const bob = new Anthropic({ apiKey: "sk-ant-tsclient-bob", baseURL, maxRetries: 0 });
{
  const { response } = await bob.messages.create(params).withResponse();
  report.otherCredential = { replay: response.headers.get("x-rewind-replay") };
}

// A bad scope is a 403 the SDK surfaces as an APIError with the gateway's message.
const scoped = new Anthropic({ apiKey: "sk-ant-tsclient-alice", baseURL, maxRetries: 0, defaultHeaders: { "x-rewind-scope": "not a scope" } });
try {
  await scoped.messages.create(params);
  report.badScope = { status: 200 };
} catch (e) {
  report.badScope = { status: e.status, isAPIError: e instanceof Anthropic.APIError, type: e.error?.error?.type, message: e.error?.error?.message };
}

process.stdout.write(JSON.stringify(report));
