// agent-rewind ui: the page's script. No framework: small DOM helpers, fetch, SVG. Every text
// from the store (paths, labels, file lines) goes in through textContent, never as markup.
"use strict";

const csrf = document.querySelector('meta[name="csrf"]').content;
const state = { timeline: null, a: null, b: "live", diff: null, file: null, mode: "unified", picked: new Set(), version: "", collapsed: new Set() };

function h(tag, attrs, ...kids) {
  const svg = ["svg", "path", "circle", "line", "polyline", "rect", "text", "g", "title"].includes(tag);
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.setAttribute("class", v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

// put replaces el's children with kids, skipping the null, undefined and false that conditional
// parts leave (replaceChildren would show them as text).
function put(el, ...kids) {
  el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
}

async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json", "X-Rewind-CSRF": csrf }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  const text = await r.text();
  let v;
  try { v = JSON.parse(text); } catch { v = { error: text.trim() }; }
  if (!r.ok) throw new Error(v.error || r.statusText);
  return v;
}

const short = (id) => (id ? id.slice(0, 8) : "live");
const when = (t) => new Date(t).toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
const pointName = (id) => (id === "live" ? "the live workspace" : short(id));

function showError(where, err) {
  put(where, h("div", { class: "error" }, String(err.message || err)));
}

// ---- timeline ----

const ROW = 44, LANE = 18, PAD = 14;

function laneColor(lane) {
  return ["#2563eb", "#d97706", "#7c3aed", "#059669", "#db2777", "#0891b2"][lane % 6];
}

async function loadTimeline() {
  const tl = await api("api/timeline");
  state.timeline = tl;
  const ids = new Set(tl.steps.map((s) => s.id));
  if (!state.a || (state.a !== "live" && !ids.has(state.a))) {
    state.a = tl.current || (tl.steps.length ? tl.steps[tl.steps.length - 1].id : null);
  }
  if (state.b !== "live" && !ids.has(state.b)) state.b = "live";
  drawTimeline();
}

function changeText(c) {
  if (!c) return [];
  const parts = [];
  if (c.added) parts.push(h("span", { class: "n-add" }, "+" + c.added));
  if (c.modified) parts.push(h("span", { class: "n-mod" }, "~" + c.modified));
  if (c.deleted) parts.push(h("span", { class: "n-del" }, "−" + c.deleted));
  if (c.other) parts.push(h("span", { class: "n-oth" }, "±" + c.other));
  return parts.length ? parts : [h("span", { class: "muted" }, "no change")];
}

function drawTimeline() {
  const tl = state.timeline;
  const box = document.getElementById("timeline");
  const steps = [...tl.steps].reverse(); // newest on top
  const groupOf = new Map(), foldOf = new Map();
  for (const g of tl.groups) {
    for (const id of g.steps) groupOf.set(id, g);
    for (const p of g.prompts || []) for (const id of p.steps) foldOf.set(id, p);
  }
  // Rows: the live workspace first, then the checkpoints, a group header before a group's
  // newest step, and inside it a prompt's header before that prompt's newest step.
  const rows = [{ live: true }];
  const shown = new Set();
  for (const s of steps) {
    const g = groupOf.get(s.id);
    if (g && !shown.has(g)) {
      shown.add(g);
      rows.push({ group: g });
    }
    if (g && state.collapsed.has(g.steps[0])) continue;
    const p = foldOf.get(s.id);
    if (p && !shown.has(p)) {
      shown.add(p);
      rows.push({ prompt: p });
    }
    if (p && state.collapsed.has(foldKey(p))) continue;
    rows.push({ step: s, inPrompt: !!p });
  }
  const width = PAD * 2 + Math.max(1, tl.lanes) * LANE;
  const y = new Map();
  rows.forEach((r, i) => { if (r.step) y.set(r.step.id, i * ROW + ROW / 2); });
  const svg = h("svg", { class: "graph", width, height: rows.length * ROW, "aria-hidden": "true" });
  const x = (lane) => PAD + lane * LANE + LANE / 2;
  for (const r of rows) {
    if (!r.step || !r.step.parent || !y.has(r.step.parent)) continue;
    const p = tl.steps.find((s) => s.id === r.step.parent);
    const x1 = x(r.step.lane), y1 = y.get(r.step.id), x2 = x(p.lane), y2 = y.get(p.id);
    const d = x1 === x2 ? `M${x1} ${y1} L${x2} ${y2}` : `M${x1} ${y1} L${x1} ${y2 - ROW / 2} Q${x1} ${y2} ${x2} ${y2}`;
    svg.append(h("path", { d, class: "edge", stroke: laneColor(r.step.lane) }));
  }
  if (tl.current && y.has(tl.current)) {
    const c = tl.steps.find((s) => s.id === tl.current);
    svg.append(h("path", { d: `M${x(c.lane)} ${ROW / 2} L${x(c.lane)} ${y.get(c.id)}`, class: "edge live-edge" }));
  }
  svg.append(h("circle", { cx: x(tl.current ? tl.steps.find((s) => s.id === tl.current).lane : 0), cy: ROW / 2, r: 5, class: "node live-node" }));
  for (const r of rows) {
    if (!r.step) continue;
    const s = r.step, cur = s.id === tl.current;
    const fill = cur ? "#fde68a" : s.kind === "safety" ? "#fff" : laneColor(s.lane);
    svg.append(h("circle", { cx: x(s.lane), cy: y.get(s.id), r: cur ? 7 : 5, class: `node kind-${s.kind}${cur ? " current" : ""}`, stroke: laneColor(s.lane), fill },
      h("title", {}, `${s.kind} checkpoint ${s.id}`)));
  }
  const list = h("div", { class: "rows" });
  const promptIDs = new Set(); // a prompt split in two folds (a rewind between its calls) has one id
  list.style.setProperty("--graph-w", width + "px");
  for (const r of rows) {
    if (r.live) {
      list.append(h("div", { class: "row live-row", id: "row-live" },
        h("div", { class: "what" }, h("span", { class: "label" }, "Live workspace"), h("span", { class: "muted" }, " — now, unsaved")),
        pickButtons("live"), h("span", { class: "rewind-space" })));
      continue;
    }
    if (r.group) {
      const g = r.group, open = !state.collapsed.has(g.steps[0]);
      list.append(h("div", { class: `row group-row${open ? "" : " folded"}`, onclick: () => { open ? state.collapsed.add(g.steps[0]) : state.collapsed.delete(g.steps[0]); drawTimeline(); } },
        h("span", { class: "twisty" }, open ? "▾" : "▸"), h("span", { class: "label", title: `agent session ${g.session}` }, `agent session ${shortSession(g.session)}`),
        h("span", { class: "muted group-tools", title: toolSummary(g.tools) }, ` · ${g.steps.length} tool call${g.steps.length === 1 ? "" : "s"}: ${toolSummary(g.tools)}`)));
      continue;
    }
    if (r.prompt) {
      const p = r.prompt, key = foldKey(p), open = !state.collapsed.has(key), n = p.steps.length;
      list.append(h("div", { class: `row group-row prompt-row${open ? "" : " folded"}`, id: promptIDs.has(p.n) ? null : "prompt-" + p.n, "data-prompt": p.n,
        title: `agent-rewind rewind prompt:${p.n} goes back to before it`,
        onclick: () => { open ? state.collapsed.add(key) : state.collapsed.delete(key); drawTimeline(); } },
        h("span", { class: "twisty" }, open ? "▾" : "▸"), h("span", { class: "label" }, `prompt ${p.n} “${p.text}”`),
        h("span", { class: "muted group-tools", title: toolSummary(p.tools) }, ` → ${n} tool call${n === 1 ? "" : "s"}: ${toolSummary(p.tools)}`)));
      promptIDs.add(p.n);
      continue;
    }
    const s = r.step, cur = s.id === tl.current;
    list.append(h("div", { class: `row${cur ? " current-row" : ""}${s.session ? " in-group" : ""}${r.inPrompt ? " in-prompt" : ""}`, id: "row-" + s.id, "data-id": s.id },
      h("div", { class: "what" },
        h("div", { class: "line1" },
          h("span", { class: "label" }, s.label || (s.tool ? s.tool : "(no label)")),
          h("span", { class: "kind kind-" + s.kind }, s.kind),
          cur ? h("span", { class: "here" }, "you are here") : null),
        h("div", { class: "line2" }, h("code", { title: s.id }, short(s.id)), " · ", when(s.time), " · ", changeText(s.change))),
      pickButtons(s.id),
      h("button", { class: "small ghost rewind-btn", title: "Make the whole workspace equal to this checkpoint (dry run first)", onclick: () => confirmRewind(s) }, "Rewind…")));
  }
  const wrap = h("div", { class: "timeline-body" }, svg, list);
  if (!tl.steps.length) wrap.append(h("p", { class: "muted empty" }, "No checkpoints yet: run agent-rewind checkpoint, or let an agent work."));
  put(box, wrap);
}

// foldKey names a prompt's fold in state.collapsed (a session's is its oldest step's id).
function foldKey(p) {
  return "prompt " + p.steps[0];
}

// shortSession shortens a session id such as a UUID to its first 8 characters on the row; the
// header's title has it whole.
function shortSession(id) {
  return id.length > 12 ? id.slice(0, 8) + "…" : id;
}

// toolSummary names a group's tools by kind with their counts ("Edit ×12, Bash ×9"): each entry
// is "Tool callid", and a list of every call would not fit one row.
function toolSummary(tools) {
  const n = new Map();
  for (const t of tools) if (t) n.set(t.split(" ")[0], (n.get(t.split(" ")[0]) || 0) + 1);
  return [...n].map(([tool, c]) => (c > 1 ? `${tool} ×${c}` : tool)).join(", ");
}

function pickButtons(id) {
  const a = state.a === id, b = state.b === id;
  return h("div", { class: "picks" },
    id === "live" ? h("span", { class: "pick-space" }) : h("button", { class: "pick pick-a" + (a ? " on" : ""), title: "compare from here (A)", "data-pick": "a", onclick: () => pick("a", id) }, "A"),
    h("button", { class: "pick pick-b" + (b ? " on" : ""), title: "compare to here (B)", "data-pick": "b", onclick: () => pick("b", id) }, "B"));
}

function pick(side, id) {
  state[side] = id;
  state.file = null;
  state.picked.clear();
  drawTimeline();
  loadDiff();
}

// ---- diff ----

async function loadDiff() {
  const head = document.getElementById("diff-head"), tree = document.getElementById("diff-tree");
  if (!state.a) {
    put(head, h("p", { class: "muted" }, "Take a checkpoint to compare."));
    put(tree);
    return;
  }
  try {
    state.diff = await api(`api/diff?a=${encodeURIComponent(state.a)}&b=${encodeURIComponent(state.b)}`);
  } catch (e) {
    showError(tree, e);
    return;
  }
  drawDiff();
  if (state.file) loadFile(state.file);
  else put(document.getElementById("file-view"));
}

function counts(changes) {
  const n = { added: 0, modified: 0, deleted: 0, mode: 0, type: 0 };
  for (const c of changes) n[c.kind]++;
  return n;
}

function drawDiff() {
  const d = state.diff, head = document.getElementById("diff-head"), tree = document.getElementById("diff-tree");
  const n = counts(d.changes);
  const summary = Object.entries(n).filter(([, v]) => v).map(([k, v]) => h("span", { class: "chip chip-" + k }, `${v} ${k}`));
  const restoreFrom = (id) => h("button", { class: "primary", id: "restore-from-" + (id === state.a ? "a" : "b"), disabled: state.picked.size === 0,
    onclick: () => confirmRestore(id, [...state.picked]) }, `Restore ${state.picked.size || ""} selected from ${short(id)}`);
  put(head,
    h("h2", {}, "Changes ", h("code", { class: "pick-a" }, short(d.from)), " → ", h("code", { class: "pick-b" }, d.to ? short(d.to) : "live")),
    h("div", { class: "summary" }, summary.length ? summary : h("span", { class: "muted" }, "no differences")),
    d.truncated ? h("div", { class: "note" }, `Showing the first ${d.changes.length} of ${d.total} changed paths.`) : null,
    ...(d.warnings || []).map((w) => h("div", { class: "note" }, w)),
    d.changes.length ? h("div", { class: "actions" }, h("span", { class: "muted" }, "Tick files or folders, then: "), restoreFrom(d.from), d.to ? restoreFrom(d.to) : null) : null);
  // Build a folder tree with counts.
  const root = { name: "", dirs: new Map(), files: [], count: 0 };
  for (const c of d.changes) {
    const parts = c.path.split("/");
    let node = root;
    node.count++;
    for (const p of parts.slice(0, -1)) {
      if (!node.dirs.has(p)) node.dirs.set(p, { name: p, dirs: new Map(), files: [], count: 0, path: (node.path ? node.path + "/" : "") + p });
      node = node.dirs.get(p);
      node.count++;
    }
    node.files.push(c);
  }
  const render = (node) => {
    const ul = h("ul", {});
    for (const dir of [...node.dirs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      ul.append(h("li", { class: "dir" },
        h("label", {}, pickBox(dir.path), h("span", { class: "dirname" }, dir.name + "/"), h("span", { class: "count" }, String(dir.count))),
        render(dir)));
    }
    for (const c of node.files) {
      const name = c.path.split("/").pop();
      const t = (c.to || c.from).type;
      ul.append(h("li", { class: "file" + (state.file === c.path ? " selected" : ""), "data-path": c.path },
        pickBox(c.path),
        h("a", { href: "#", class: "filename", onclick: (e) => { e.preventDefault(); state.file = c.path; drawDiff(); loadFile(c.path); } }, name),
        h("span", { class: "chip chip-" + c.kind }, c.kind), t !== "file" ? h("span", { class: "muted" }, " " + t) : null));
    }
    return ul;
  };
  put(tree, d.changes.length ? render(root) : h("p", { class: "muted" }, "The two points hold the same files."));
}

function pickBox(path) {
  return h("input", { type: "checkbox", class: "pickpath", "data-path": path, checked: state.picked.has(path),
    onclick: (e) => { e.stopPropagation(); e.target.checked ? state.picked.add(path) : state.picked.delete(path); drawDiff(); } });
}

async function loadFile(path) {
  const view = document.getElementById("file-view");
  try {
    const fd = await api(`api/file?a=${encodeURIComponent(state.a)}&b=${encodeURIComponent(state.b)}&path=${encodeURIComponent(path)}`);
    drawFile(fd);
  } catch (e) {
    showError(view, e);
  }
}

function entryText(e) {
  if (!e) return "absent";
  const mode = e.type === "symlink" ? "" : " " + (e.mode & 0o7777).toString(8).padStart(4, "0");
  if (e.type === "symlink") return "symlink → " + e.target;
  if (e.type === "file") return `file${mode}, ${e.size} bytes`;
  return e.type + mode;
}

function drawFile(fd) {
  const view = document.getElementById("file-view");
  const toggle = h("div", { class: "seg" },
    h("button", { class: state.mode === "unified" ? "on" : "", id: "mode-unified", onclick: () => { state.mode = "unified"; drawFile(fd); } }, "Unified"),
    h("button", { class: state.mode === "split" ? "on" : "", id: "mode-split", onclick: () => { state.mode = "split"; drawFile(fd); } }, "Side by side"));
  const head = h("div", { class: "file-head" }, h("code", { class: "path" }, fd.path), fd.show === "text" ? toggle : null);
  const meta = h("div", { class: "file-meta" },
    h("div", {}, h("b", { class: "pick-a" }, "A "), entryText(fd.from)),
    h("div", {}, h("b", { class: "pick-b" }, "B "), entryText(fd.to)));
  let body;
  switch (fd.show) {
    case "text":
      body = state.mode === "unified" ? unified(fd.hunks) : split(fd.hunks);
      break;
    case "symlink":
      body = h("div", { class: "special", id: "show-symlink" }, "Symlink target: ", h("code", {}, fd.from ? fd.from.target : "—"), " → ", h("code", {}, fd.to ? fd.to.target : "—"));
      break;
    case "mode":
      body = h("div", { class: "special", id: "show-mode" }, "Permissions changed: ", h("code", {}, (fd.from.mode).toString(8).padStart(4, "0")), " → ", h("code", {}, (fd.to.mode).toString(8).padStart(4, "0")), " (content unchanged)");
      break;
    case "binary":
      body = h("div", { class: "special", id: "show-binary" }, "Binary file: contents differ (", fd.from ? fd.from.size + " bytes" : "absent", " → ", fd.to ? fd.to.size + " bytes" : "absent", ")");
      break;
    case "type":
      body = h("div", { class: "special", id: "show-type" }, "Type changed: ", fd.note);
      break;
    default:
      body = h("div", { class: "special", id: "show-" + fd.show }, fd.note || fd.show);
  }
  put(view, head, meta, body, fd.truncated ? h("div", { class: "note" }, "The diff is long: only its beginning is shown.") : null);
}

function unified(hunks) {
  const t = h("table", { class: "code unified", id: "diff-unified" });
  hunks.forEach((hk, i) => {
    if (i > 0) t.append(h("tr", { class: "gap" }, h("td", { colspan: 4 }, "⋯")));
    for (const l of hk.lines) {
      const cls = l.op === "+" ? "add" : l.op === "-" ? "del" : "ctx";
      t.append(h("tr", { class: cls }, h("td", { class: "ln" }, l.a || ""), h("td", { class: "ln" }, l.b || ""), h("td", { class: "op" }, l.op), h("td", { class: "txt" }, l.text.replace(/\n$/, ""))));
    }
  });
  if (!hunks.length) t.append(h("tr", {}, h("td", { class: "muted" }, "Same text.")));
  return t;
}

function split(hunks) {
  const t = h("table", { class: "code split", id: "diff-split" });
  hunks.forEach((hk, i) => {
    if (i > 0) t.append(h("tr", { class: "gap" }, h("td", { colspan: 4 }, "⋯")));
    const ls = hk.lines;
    for (let j = 0; j < ls.length;) {
      if (ls[j].op === " ") {
        const l = ls[j++], txt = l.text.replace(/\n$/, "");
        t.append(h("tr", { class: "ctx" }, h("td", { class: "ln" }, l.a), h("td", { class: "txt" }, txt), h("td", { class: "ln" }, l.b), h("td", { class: "txt" }, txt)));
        continue;
      }
      const dels = [], adds = [];
      while (j < ls.length && ls[j].op === "-") dels.push(ls[j++]);
      while (j < ls.length && ls[j].op === "+") adds.push(ls[j++]);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const d = dels[k], a = adds[k];
        t.append(h("tr", {},
          h("td", { class: "ln" }, d ? d.a : ""), h("td", { class: "txt " + (d ? "del" : "empty") }, d ? d.text.replace(/\n$/, "") : ""),
          h("td", { class: "ln" }, a ? a.b : ""), h("td", { class: "txt " + (a ? "add" : "empty") }, a ? a.text.replace(/\n$/, "") : "")));
      }
    }
  });
  return t;
}

// ---- restore and rewind: dry run first, then a confirmation ----

function modal(...kids) {
  const m = document.getElementById("modal");
  put(document.getElementById("modal-box"), ...kids);
  m.classList.remove("hidden");
}
function closeModal() { document.getElementById("modal").classList.add("hidden"); }

function changeList(res) {
  const ul = h("ul", { class: "changes" });
  for (const c of res.changes.slice(0, 200)) ul.append(h("li", {}, h("span", { class: "chip chip-" + c.kind }, c.kind), " ", h("code", {}, c.path)));
  if (res.changes.length > 200) ul.append(h("li", { class: "muted" }, `… and ${res.changes.length - 200} more`));
  for (const k of res.kept || []) ul.append(h("li", { class: "muted" }, h("code", {}, k.path), " left alone: " + k.reason));
  return ul;
}

async function confirmAction(title, endpoint, body, describe) {
  modal(h("h3", {}, title), h("p", { class: "muted" }, "Working out what would change…"));
  let dry, dryConv;
  try {
    const d = await api(endpoint, { ...body, dryRun: true });
    dry = d.result;
    dryConv = d.conversation;
  } catch (e) {
    modal(h("h3", {}, title), h("div", { class: "error" }, e.message), h("div", { class: "buttons" }, h("button", { onclick: closeModal }, "Close")));
    return;
  }
  const go = async () => {
    modal(h("h3", {}, title), h("p", { class: "muted" }, "Working…"));
    try {
      const out = await api(endpoint, { ...body, dryRun: false });
      const r = out.result;
      modal(h("h3", {}, "Done"), h("p", { id: "done-text" }, describe(r)), changeList(r),
        out.error ? h("div", { class: "error" }, out.error) : null,
        r.safety ? h("p", { class: "muted" }, `The state before is checkpoint ${short(r.safety)}: rewind to it to undo.`) : null,
        r.chainSeq ? h("p", { class: "muted" }, `Recorded on the chain as entry ${r.chainSeq}.`) : null,
        conversationDone(out.conversation),
        h("div", { class: "buttons" }, h("button", { class: "primary", id: "modal-close", onclick: closeModal }, "Close")));
    } catch (e) {
      modal(h("h3", {}, title), h("div", { class: "error" }, e.message), h("div", { class: "buttons" }, h("button", { id: "modal-close", onclick: closeModal }, "Close")));
    }
    refresh(true);
  };
  modal(h("h3", {}, title),
    h("p", {}, dry.changes.length ? `This would change ${dry.changes.length} path${dry.changes.length === 1 ? "" : "s"}:` : "This would change nothing."),
    changeList(dry),
    dryConv ? h("p", { id: "conversation-dry" }, `The agent's conversation (${dryConv.client}, session ${short(dryConv.session)}) would end just before this call: ` +
      `${dryConv.droppedMessages} turn${dryConv.droppedMessages === 1 ? "" : "s"} and ${dryConv.droppedCalls.length} tool call${dryConv.droppedCalls.length === 1 ? "" : "s"} go back, in a new session beside the original, which stays as it is.`) : null,
    h("p", { class: "muted" }, "A safety checkpoint of the whole workspace is taken first, and the operation is recorded on the chain."),
    h("div", { class: "buttons" }, h("button", { id: "modal-cancel", onclick: closeModal }, "Cancel"),
      h("button", { class: "primary danger", id: "modal-confirm", onclick: go }, "Confirm")));
}

function confirmRestore(id, paths) {
  confirmAction(`Restore ${paths.length} path${paths.length === 1 ? "" : "s"} from ${short(id)}`, "api/restore", { checkpoint: id, paths },
    (r) => `Restored ${r.paths.join(", ")} from ${short(r.to)}; the position stays ${short(r.from)}.`);
}

function confirmRewind(step) {
  const title = `Rewind the whole workspace to ${short(step.id)}${step.label ? " “" + step.label + "”" : ""}`;
  const files = (conversation) => confirmAction(title, "api/rewind", { checkpoint: step.id, conversation }, (r) => `Rewound to ${short(r.to)}.`);
  if (!step.session) return files(false);
  // An agent's automatic checkpoint: its conversation can go back with the files (Claude Code, Codex).
  modal(h("h3", {}, title),
    h("p", {}, "This checkpoint was taken before a tool call of an agent session. The agent remembers what it did after it unless its conversation goes back too."),
    h("div", { class: "buttons" }, h("button", { id: "modal-cancel", onclick: closeModal }, "Cancel"),
      h("button", { id: "rewind-files", onclick: () => files(false) }, "Files only"),
      h("button", { class: "primary", id: "rewind-conversation", onclick: () => files(true) }, "Files and conversation")));
}

// conversationDone says how to resume the agent after a rewind with its conversation.
function conversationDone(c) {
  if (!c) return null;
  if (!c.written) return c.empty ? h("p", { id: "conversation-done" }, `The conversation goes back to before its first prompt: start a new session with `, h("code", {}, c.resume), ".") : null;
  return h("p", { id: "conversation-done" }, "The conversation was forked to end before that call (the original session is kept). Resume the agent with ", h("code", {}, c.resume), ".");
}

// ---- effects ----

async function loadEffects() {
  const box = document.getElementById("effects-table");
  let v;
  try { v = await api("api/effects"); } catch (e) { showError(box, e); return; }
  if (!v.effects.length) {
    put(box, h("p", { class: "muted" }, "No effects recorded: nothing has fired through the guard yet."));
    return;
  }
  const t = h("table", { class: "grid" }, h("tr", {}, ...["Key", "State", "First use", "Checkpoint", "Tool call", "Refusals", "History", ""].map((x) => h("th", {}, x))));
  for (const r of v.effects) {
    const refusals = v.refusals[r.key] || 0;
    t.append(h("tr", { "data-key": r.key },
      h("td", {}, h("code", {}, r.key), r.description ? h("div", { class: "muted" }, r.description) : null),
      h("td", {}, h("span", { class: "state state-" + r.state }, r.state)),
      h("td", {}, when(r.first_seen)), h("td", {}, h("code", {}, r.checkpoint ? short(r.checkpoint) : "—")),
      h("td", {}, h("code", {}, r.tool_use_id || "—")), h("td", {}, String(refusals)),
      h("td", { class: "muted" }, r.history.map((x) => (x.from ? x.from + "→" : "") + x.to + (x.reason ? ` (${x.reason})` : "")).join(", ")),
      h("td", {}, r.state !== "released" ? h("button", { class: "small", onclick: () => confirmRelease(r) }, "Release…") : null)));
  }
  put(box, t);
}

function confirmRelease(r) {
  const reason = h("input", { type: "text", id: "release-reason", placeholder: "why it may fire again, e.g. the charge was refunded", class: "wide" });
  const err = h("div", {});
  modal(h("h3", {}, "Release ", h("code", {}, r.key)),
    h("p", {}, "Release only after checking the outside world: the key may then fire again. The reason is recorded on the chain."),
    reason, err,
    h("div", { class: "buttons" }, h("button", { onclick: closeModal }, "Cancel"),
      h("button", { class: "primary danger", id: "release-confirm", onclick: async () => {
        if (!reason.value.trim()) { put(err, h("div", { class: "error" }, "A reason is required.")); return; }
        try { await api("api/release", { key: r.key, reason: reason.value.trim() }); closeModal(); refresh(true); } catch (e) { showError(err, e); }
      } }, "Release")));
  reason.focus();
}

// ---- chain ----

async function loadChain() {
  const box = document.getElementById("chain-view"), badge = document.getElementById("chain-badge");
  let v;
  try { v = await api("api/chain"); } catch (e) { showError(box, e); return; }
  badge.className = "badge " + (v.ok ? "ok" : "bad");
  badge.textContent = v.ok ? (v.empty ? "chain: empty" : `chain intact · ${v.size}`) : "chain BROKEN";
  const rows = [];
  if (v.empty) rows.push(["Status", "Nothing recorded yet."]);
  else if (v.ok) rows.push(["Status", h("span", { class: "ok-text", id: "chain-status" }, `Verified: all ${v.size} entries intact`)]);
  else rows.push(["Status", h("span", { class: "bad-text", id: "chain-status" }, `Broken${v.line ? " at line " + v.line : ""}: ${v.problem}`)], ["Detail", v.error]);
  if (v.head) rows.push(["Merkle head", h("code", { class: "hash" }, v.head.root)], ["Entries covered", String(v.head.size)]);
  rows.push(["Anchor", v.anchor === "extends" ? `The chain extends its anchored head (kept outside the workspace)${v.beyondAnchor ? `; ${v.beyondAnchor} entries after it` : ""}.` : "No anchored head yet."]);
  rows.push(["Signed", !v.signed ? "Not signed (sign a head with: agent-rewind chain head --sign-key FILE)."
    : v.signers && v.signers.length ? h("span", { id: "chain-signers" }, "Signed by ", ...v.signers.flatMap((n, i) => [i ? ", " : "", h("code", {}, n)]), h("span", { class: "muted" }, " (names as the note gives them; agent-rewind chain verify --head FILE --key VKEY checks the signatures)"))
    : "The anchored head is a signed note, with no signature line."]);
  if (v.gaps) {
    const g = v.gaps, n = g.leftover.length + g.unrecordedCheckpoints.length + g.unrecordedEffects.length + g.missingCheckpoints.length + g.missingEffects.length;
    rows.push(["Record", n ? `${n} gap${n === 1 ? "" : "s"} between the store and the chain (agent-rewind chain verify lists them)` : "Complete: every checkpoint and effect has its entry."]);
  }
  if (v.error && v.ok) rows.push(["Note", v.error]);
  put(box,
    h("table", { class: "kv" }, ...rows.map(([k, val]) => h("tr", {}, h("th", {}, k), h("td", {}, val)))),
    h("p", {}, h("a", { class: "button", href: "api/export", download: "agent-rewind-chain.tar", id: "export" }, "Export the auditor's bundle"),
      h("span", { class: "muted" }, " a tar of the chain, its head and a verifier anyone can run without this program.")),
    h("p", { class: "muted" }, "Checked " + when(v.checked)));
}

// ---- savings ----

async function loadSavings() {
  const box = document.getElementById("savings-view");
  let s;
  try { s = await api("api/savings"); } catch (e) { showError(box, e); return; }
  const models = Object.entries(s.by_model || {}).sort(([, a], [, b]) => b.avoided_cost_usd - a.avoided_cost_usd || b.replayed_calls - a.replayed_calls);
  const usd = (x) => "$" + x.toFixed(x < 1 ? 4 : 2);
  const kids = [
    h("p", { class: "note", id: "savings-note" }, s.note),
    h("table", { class: "kv" },
      h("tr", {}, h("th", {}, "Calls answered by replay"), h("td", {}, String(s.replayed_calls))),
      h("tr", {}, h("th", {}, "Avoided cost"), h("td", {}, usd(s.avoided_cost_usd), s.unpriced_calls ? ` (+${s.unpriced_calls} unpriced calls)` : "")),
      h("tr", {}, h("th", {}, "As of"), h("td", {}, s.updated ? when(s.updated) : "never written: the gateway has replayed nothing"))),
  ];
  if (models.length) {
    const max = Math.max(...models.map(([, m]) => m.avoided_cost_usd || m.replayed_calls), 1e-9);
    const W = 520, BAR = 26;
    const svg = h("svg", { class: "chart", width: W + 400, height: models.length * (BAR + 10) + 10 });
    models.forEach(([name, m], i) => {
      const v = m.avoided_cost_usd || m.replayed_calls, y = 10 + i * (BAR + 10);
      svg.append(h("text", { x: 0, y: y + BAR * 0.68, class: "chart-label" }, name),
        h("rect", { x: 200, y, width: Math.max(2, (W * v) / max), height: BAR, rx: 4, class: "bar" }),
        h("text", { x: 208 + Math.max(2, (W * v) / max), y: y + BAR * 0.68, class: "chart-value" }, `${m.priced ? usd(m.avoided_cost_usd) : "unpriced"} · ${m.replayed_calls} calls`));
    });
    kids.push(h("h3", {}, "By model"), svg);
  }
  if (s.chart) kids.push(h("h3", {}, "Over time"), savingsChart(s.chart, usd));
  put(box, ...kids);
}

// savingsChart draws the receipt's hourly running totals (laid out by the server) as a line.
function savingsChart(c, usd) {
  const cost = c.series === "avoided_cost_usd", fmt = (v) => cost ? usd(v) : String(Math.round(v));
  const day = (t) => new Date(t).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  const last = c.points.split(" ").pop().split(",");
  return h("svg", { class: "chart line-chart", id: "savings-chart", width: c.width, height: c.height, role: "img" },
    h("title", {}, `${cost ? "Avoided cost" : "Calls answered by replay"} over time (replay savings only)`),
    h("line", { x1: 70, y1: 14, x2: 70, y2: 190, class: "axis" }), h("line", { x1: 70, y1: 190, x2: 620, y2: 190, class: "axis" }),
    h("text", { x: 62, y: 18, class: "chart-value", "text-anchor": "end" }, fmt(c.max)),
    h("text", { x: 62, y: 190, class: "chart-value", "text-anchor": "end" }, cost ? "$0" : "0"),
    h("text", { x: 70, y: 208, class: "chart-value" }, day(c.from)),
    c.samples > 1 ? h("text", { x: 620, y: 208, class: "chart-value", "text-anchor": "end" }, day(c.to)) : null,
    h("polyline", { points: c.points, class: "line" }),
    h("circle", { cx: last[0], cy: last[1], r: 3.5, class: "dot" }),
    h("text", { x: 80, y: 30, class: "chart-label", id: "savings-chart-label" }, `${cost ? "avoided cost" : "calls answered by replay"}, running total per hour · replay savings only`));
}

// ---- tabs, refresh ----

// The tab shown follows the address's fragment (#effects), so a tab can be linked and reloaded.
function showTab(name) {
  const b = document.querySelector(`.tab[data-tab="${name}"]`) || document.querySelector(".tab");
  for (const x of document.querySelectorAll(".tab")) x.classList.toggle("active", x === b);
  for (const p of document.querySelectorAll(".panel")) p.classList.toggle("active", p.id === b.dataset.tab);
}
for (const b of document.querySelectorAll(".tab")) {
  b.addEventListener("click", () => { history.replaceState(null, "", "#" + b.dataset.tab); showTab(b.dataset.tab); });
}
showTab(location.hash.slice(1));

async function refresh(force) {
  try {
    const v = await api("api/version");
    document.getElementById("live").classList.remove("off");
    if (!force && v.version === state.version) return;
    state.version = v.version;
  } catch {
    document.getElementById("live").classList.add("off");
    return;
  }
  await loadTimeline().catch((e) => showError(document.getElementById("timeline"), e));
  await Promise.all([loadDiff(), loadEffects(), loadChain(), loadSavings()]);
  document.body.dataset.version = state.version;
}

refresh(true);
setInterval(() => refresh(false), 1000);
