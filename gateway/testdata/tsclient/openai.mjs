// Drives agent-rewind's gateway with the official OpenAI TypeScript SDK (a client nobody here
// wrote): node openai.mjs BASE_URL [replay|tape]. It prints one JSON report on stdout for the
// Go test (gateway/tsclient_test.go) to check.
//
// replay: each of the four calls (Responses and Chat Completions, created and streamed) twice
// with one key, once with another key, and a Responses call that the API would store.
// tape: each of the four calls once, with an x-rewind-request-id, then the first again with
// the same id (a retry); run it while recording and again while replaying.
import OpenAI from "openai";

const [baseURL, mode = "replay"] = process.argv.slice(2);
if (!baseURL) {
  console.error("usage: node openai.mjs BASE_URL [replay|tape]");
  process.exit(2);
}
const client = new OpenAI({ apiKey: "sk-openai-tsclient-alice", baseURL: baseURL + "/v1", maxRetries: 0 });
const other = new OpenAI({ apiKey: "sk-openai-tsclient-bob", baseURL: baseURL + "/v1", maxRetries: 0 });
const input = "Say hello from the OpenAI SDK.";

// Each call returns what the test compares: how the gateway answered, the text the SDK
// assembled, the usage it parsed, and for streams the event types in order.
const calls = {
  responses: async (c, opts) => {
    const { data, response } = await c.responses.create({ model: "gpt-5", store: false, input }, opts).withResponse();
    return { replay: response.headers.get("x-rewind-replay"), position: response.headers.get("x-rewind-tape-position"), text: data.output_text, usage: data.usage };
  },
  responsesStream: async (c, opts) => {
    const { data: stream, response } = await c.responses.create({ model: "gpt-5", store: false, input, stream: true }, opts).withResponse();
    const events = [];
    let text = "", usage;
    for await (const ev of stream) {
      events.push(ev.type);
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") usage = ev.response.usage;
    }
    return { replay: response.headers.get("x-rewind-replay"), position: response.headers.get("x-rewind-tape-position"), text, events, usage };
  },
  chat: async (c, opts) => {
    const { data, response } = await c.chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content: input }] }, opts).withResponse();
    return { replay: response.headers.get("x-rewind-replay"), position: response.headers.get("x-rewind-tape-position"), text: data.choices[0].message.content, usage: data.usage };
  },
  chatStream: async (c, opts) => {
    const { data: stream, response } = await c.chat.completions
      .create({ model: "gpt-5", messages: [{ role: "user", content: input }], stream: true, stream_options: { include_usage: true } }, opts)
      .withResponse();
    const events = [];
    let text = "", usage;
    for await (const chunk of stream) {
      events.push(chunk.choices[0]?.finish_reason ?? (chunk.usage ? "usage" : "delta"));
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    return { replay: response.headers.get("x-rewind-replay"), position: response.headers.get("x-rewind-tape-position"), text, events, usage };
  },
};

const report = {};
if (mode === "replay") {
  for (const [name, call] of Object.entries(calls)) {
    report[name] = { first: await call(client), second: await call(client), otherKey: await call(other) };
  }
  // The API stores a response unless told not to: never replayed.
  const stored = [];
  for (let i = 0; i < 2; i++) {
    const { response } = await client.responses.create({ model: "gpt-5", input }).withResponse();
    stored.push({ replay: response.headers.get("x-rewind-replay"), bypass: response.headers.get("x-rewind-bypass") });
  }
  report.stored = stored;
  // The gateway's own errors reach the SDK as its APIError, with the gateway's message.
  const scoped = new OpenAI({ apiKey: "sk-openai-tsclient-alice", baseURL: baseURL + "/v1", maxRetries: 0, defaultHeaders: { "x-rewind-scope": "not a scope" } });
  try {
    await scoped.responses.create({ model: "gpt-5", store: false, input });
    report.badScope = { status: 200 };
  } catch (e) {
    report.badScope = { status: e.status, isAPIError: e instanceof OpenAI.APIError, code: e.code, message: e.message };
  }
} else {
  for (const [name, call] of Object.entries(calls)) {
    report[name] = await call(client, { headers: { "x-rewind-request-id": "sdk-" + name } });
  }
  report.retry = await calls.responses(client, { headers: { "x-rewind-request-id": "sdk-responses" } });
}
process.stdout.write(JSON.stringify(report));
