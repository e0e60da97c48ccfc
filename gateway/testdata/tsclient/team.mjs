// Drives two replicas of a team gateway with the official Anthropic TypeScript SDK:
// node team.mjs BASE_A BASE_B GATEWAY_KEY. The gateway key goes in x-rewind-key (defaultHeaders);
// the provider key in x-api-key, as always. It prints one JSON report on stdout for the Go test
// (gateway/tsclient_test.go) to check.
import Anthropic from "@anthropic-ai/sdk";

const [baseA, baseB, key] = process.argv.slice(2);
if (!key) {
  console.error("usage: node team.mjs BASE_A BASE_B GATEWAY_KEY");
  process.exit(2);
}
const params = {
  model: "claude-sonnet-5-5",
  max_tokens: 64,
  messages: [{ role: "user", content: "Say hello to the whole team." }],
};
const client = (baseURL, headers) =>
  new Anthropic({ apiKey: "sk-ant-tsclient-team", baseURL, maxRetries: 0, defaultHeaders: headers });
const a = client(baseA, { "x-rewind-key": key });
const b = client(baseB, { "x-rewind-key": key });
const report = {};

// Recorded through A, replayed through B.
for (const [name, c] of [["first", a], ["second", b]]) {
  const { data, response } = await c.messages.create(params).withResponse();
  report[name] = { replay: response.headers.get("x-rewind-replay"), text: data.content[0].text };
}
for (const [name, c] of [["streamFirst", a], ["streamSecond", b]]) {
  const { data: stream, response } = await c.messages.create({ ...params, stream: true }).withResponse();
  const events = [];
  let text = "";
  for await (const ev of stream) {
    events.push(ev.type);
    if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
  }
  report[name] = { replay: response.headers.get("x-rewind-replay"), events, text };
}

// Without the gateway key: a 401 the SDK surfaces as an AuthenticationError.
try {
  await client(baseB, {}).messages.create(params);
  report.noKey = { status: 200 };
} catch (e) {
  report.noKey = { status: e.status, isAuthError: e instanceof Anthropic.AuthenticationError, type: e.error?.error?.type };
}
process.stdout.write(JSON.stringify(report));
