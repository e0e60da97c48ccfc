// Package gateway is agent-rewind's token-saving reverse proxy in front of the Anthropic
// API or the OpenAI API: exact record/replay from memory, Anthropic prompt-cache
// preservation, tool-output pruning, tenancy, a replay-savings receipt, and the durable ordered tape (the tape module)
// for recording and replaying a trial's calls in order.
//
// A [Gateway] is an http.Handler built on net/http/httputil.ReverseProxy (with Rewrite).
// Three APIs ([APIs]) are understood, streaming (server-sent events) or not: Anthropic
// Messages (POST /v1/messages), OpenAI Responses (POST /v1/responses) and OpenAI Chat
// Completions (POST /v1/chat/completions); every other request passes through unchanged,
// minus the gateway's own headers. [Config.Mechanisms] says which APIs each mechanism covers
// (cache preservation: Messages alone; the rest: all three). Event streams (and
// bodies of unknown length) are flushed event by event as they arrive, their headers leaving
// with the first event; every response writer keeps http.Flusher. The server has no write
// timeout, and a client that disconnects cancels its upstream request.
//
// # Configuration
//
// [Resolve] builds a [Config] from layers, each overriding the ones before: the defaults,
// the profile's defaults (lean turns cache preservation on), the JSON file (--config or
// REWIND_CONFIG), the environment (REWIND_PROFILE, REWIND_HOST, REWIND_PORT, REWIND_UPSTREAM,
// REWIND_PRESERVE_CACHE, REWIND_PRUNE_CONTEXT, REWIND_TENANT, REWIND_STORAGE,
// REWIND_STORAGE_DIRECTORY, REWIND_EPOCH, REWIND_REPLAY_CURSOR, REWIND_DATABASE_URL,
// REWIND_TLS_CERT, REWIND_TLS_KEY, REWIND_METRICS_LISTEN), then the flags ([ScanFlags]
// reads them as typed). Every setting remembers its [Source] for the startup banner
// ([Config.WriteBanner]). The file is one JSON object with the fields profile, host, port,
// upstream, preserveCache, pruneContext, tenant, storage, storageDirectory, epoch,
// replayCursor, databaseUrl, tlsCert, tlsKey, metricsListen and prices; an unknown or repeated field, an explicit null, a value of the
// wrong JSON type (a boolean must be true or false, a port an integer) is an error. The
// tape's key is never a flag or a file field: it is REWIND_STORAGE_KEY.
//
// # Memory replay
//
// The replay key of a request (see replayKey) is SHA-256 over the tape module's canonical
// request hash (method, path and query, the answer headers anthropic-version, anthropic-beta,
// openai-beta, openai-organization and openai-project, the body's canonical JSON with member
// order and whitespace ignored; for the OpenAI APIs the body without prompt_cache_key and
// client_metadata, and for Responses without its input messages' ids, see keyBody), the
// tenant, the scope, and an HMAC of the credential headers (x-api-key, authorization) under a
// key drawn at random per process: a response recorded under one credential is never served
// to another. Only a complete 200 response is recorded (a Messages message with usage or a
// stream ending with message_stop; a completed Responses object or a stream ending with
// response.completed; a chat.completion or a chunk stream ending with [DONE]); it is replayed
// byte for byte. Calls whose answer depends on, or changes, state upstream are never
// replayed, only forwarded (X-Rewind-Replay: bypass, X-Rewind-Bypass naming the rule): a
// Responses call without "store": false, or with previous_response_id, conversation or
// "background": true; a Chat Completions call with "store": true. Identical
// requests in flight together share one upstream call (golang.org/x/sync/singleflight): the
// first streams live to its client, the others wait for its finished record and get the same
// bytes (or make their own call if it was not recorded). Records live in memory only, at most
// MaxMemoryTotal bytes, and are gone when the process ends.
//
// # Headers
//
// Requests: x-rewind-scope selects a subordinate scope of the configured tenant (1 to 128
// characters from A-Z a-z 0-9 . _ : -, as the analyze module accepts); x-rewind-tenant may
// only repeat the configured tenant; x-rewind-request-id names a call for tape replay. Every
// x-rewind-* header is stripped before the upstream. Responses to POST /v1/messages carry
// X-Rewind-Replay (hit, coalesced, miss, bypass, tape, tape-retry, recorded, unrecorded), and in tape
// mode X-Rewind-Tape-Position; X-Rewind-Bypass (store, previous_response_id, conversation,
// background) on a call that is never replayed; with cache preservation X-Rewind-Cache-Plan (the planner's
// decision), with pruning X-Rewind-Pruned (how many tool results).
//
// Errors the gateway answers itself use one shape for every API (both providers' SDKs read
// error.message),
//
//	{"type":"error","error":{"type":"permission_error","code":"scope_invalid","message":"..."}}
//
// with these codes: scope_invalid and tenant_mismatch (403), request_id_invalid (400),
// body_unreadable (400: a malformed chunk, or a body shorter than its Content-Length),
// body_too_large (413), replay_refused (405: a call that could change state upstream while
// replaying a tape), tape_strict_miss and tape_end (409), tape_invalid (400), tape_queue_full
// (503 with Retry-After), tape_conflict, tape_untrusted, tape_storage, tape_interrupted (503),
// upstream_unreachable (502, or 504 past the tape's upstream deadline); in team mode
// gateway_key_missing and gateway_key_refused (401), database_unavailable (503 with
// Retry-After). tape_conflict and tape_storage carry Retry-After too: a database restarting or
// a disk filling is worth a retry. GET /healthz (the process is up) and GET /readyz (it can
// serve: not draining, and in team mode the database answers with the current schema; 503 with
// Retry-After otherwise) are answered by the gateway itself, never forwarded.
//
// # Team mode
//
// With storage postgres (StoragePostgres; the database in REWIND_DATABASE_URL or the file's
// databaseUrl, the deployment key in REWIND_DEPLOYMENT_KEY) any number of replicas share one
// PostgreSQL database through tape/pgtape: exact replays (memory stays a bounded cache in
// front, and the replay key's credential MAC key is derived from the deployment key so that
// every replica computes the same key), and, with an epoch or a replay cursor, the caller's
// tenant's ordered tape. Every request carries an API key in x-rewind-key, checked in the
// database every time; the tenant comes from it. A schema that is not current fails New;
// a database that does not answer does not: calls get 503 with Retry-After and no upstream call
// until it is back. A non-loopback team gateway needs TLS (TLSCert, TLSKey). The savings
// receipt is the fleet's, in the database ([FleetSavings]): each replica adds its counts at
// most every half second and when it closes.
// [Gateway.MetricsHandler] serves Prometheus metrics for a listener of the embedder's choosing.
// Each request is one log/slog JSON line on Config.Log (id, tenant, method, path, status, the
// X-Rewind-Replay value, milliseconds), its id returned in X-Rewind-Log-Id.
//
// # Durable tape
//
// With storage sqlite, every eligible call of the three APIs is appended to the tenant's tape
// (Dir/<tenant>/tape.db, the tape module's format) in the configured epoch, identical ones
// included; with a replay cursor, calls are answered from the tape in recorded order. Tape
// exchanges take turns, at most 64 waiting. A response is held until its record commits; a
// request or response over 512 KiB passes through unrecorded with a log line (a response
// crossing the limit mid-stream has its held bytes flushed and the rest streamed). An
// upstream call in tape mode has an absolute deadline (120 s). What is recorded is the body
// the gateway forwarded (after pruning and cache preservation): replay with the same body
// settings as the recording. A background Responses call is never on the tape: recording
// passes it through unrecorded; replaying refuses it (405 replay_refused).
//
// # Savings receipt: savings.json in the workspace's state directory
//
// Each memory replay adds its recorded usage (for OpenAI: cached tokens as cache_read,
// reasoning within output and counted apart), priced with [DefaultPrices] (or the file's
// prices), to the receipt ([Savings]; read it with [LoadSavings]):
//
//	{
//	  "kind": "agent-rewind/savings/v1",
//	  "note": "replay savings only: ...",
//	  "replayed_calls": 3,
//	  "avoided_tokens": {"input": 36, "output": 290, "cache_read": 16200, "cache_write": 0},
//	  "avoided_cost_usd": 0.00478,
//	  "unpriced_calls": 0,
//	  "by_model": {"claude-sonnet-5-5": {"replayed_calls": 3, "avoided_tokens": {...}, "avoided_cost_usd": 0.00478, "priced": true}},
//	  "prices": {"source": "...", "date": "2026-11-30", "overridden": ["..."]},
//	  "updated": "2026-11-30T12:00:00Z",
//	  "history": [{"hour": "2026-11-30T12:00:00Z", "replayed_calls": 3, "avoided_cost_usd": 0.00478}]
//	}
//
// history ([SavingsPoint]) is the running totals at the end of each hour in which the receipt
// was written, oldest first: a write in the same hour replaces the last point, a later hour
// appends one, and beyond 720 points (30 days of such hours) the oldest go. Totals rather than
// increments, so a dropped point loses no count. Receipts written before history existed have
// none and are read as they are; their next write starts it.
//
// The gateway writes it at most every half second and when it closes, each write under an
// flock on savings.json.lock, adding to what the file holds (so processes sharing a
// workspace add up), through a temporary file, fsync and rename. A crash loses at most the
// last half second of counts. The receipt counts memory replays only: not cache
// preservation, pruning or tape replay, and it is not provider billing.
package gateway
