// The observer page: polls api/state every second and follows api/events (server-sent events).
// Paths are relative, so the page works wherever the host mounts the app.
"use strict";

const POLL_MS = 1000;
const MAX_EVENTS = 200;
let sortKey = "id";
let sortDesc = false;
let sessions = [];
let selected = null;
let stopped = false;

const $ = (id) => document.getElementById(id);

function text(el, value) {
  el.textContent = value === null || value === undefined ? "–" : String(value);
}

function status(label, cls) {
  const el = $("status");
  el.textContent = label;
  el.className = cls;
}

function showCounters(state) {
  const s = state.statistics;
  text($("live-sessions"), state.live_sessions);
  text($("runs-started"), s.runs_started);
  text($("runs-completed"), s.runs_completed);
  text($("runs-failed"), s.runs_failed);
  text($("runs-pending"), s.runs_pending);
  text($("activations"), s.activations);
  text($("passivations"), s.passivations);
  text($("crashes"), s.crashes);
  text($("events-emitted"), s.events_emitted);
  text($("events-dropped"), s.events_dropped);
}

function ms(value) {
  return value === null ? "–" : `${value.toFixed(1)} ms`;
}

function showLatency(latency) {
  text($("p50"), ms(latency.p50));
  text($("p99"), ms(latency.p99));
  text($("latency-count"), latency.count);
  const most = Math.max(1, ...latency.buckets.map((b) => b[1]));
  const bars = $("histogram");
  const labels = $("histogram-labels");
  bars.replaceChildren();
  labels.replaceChildren();
  for (const [bound, count] of latency.buckets) {
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.style.height = `${(100 * count) / most}%`;
    bar.title = `${bound === null ? "more" : "≤ " + bound + " ms"}: ${count} runs`;
    bars.append(bar);
    const label = document.createElement("span");
    label.textContent = bound === null ? "∞" : bound >= 1000 ? `${bound / 1000}s` : `${bound}`;
    labels.append(label);
  }
}

function treeNode(node) {
  const li = document.createElement("li");
  const id = document.createElement("span");
  id.className = node.alive ? "node-id" : "node-id dead";
  id.textContent = node.id;
  const tag = document.createElement("span");
  tag.className = "tag";
  let about = `${node.actor || "not running"} · ${node.type} · ${node.restart}`;
  if (node.counts) about += ` · ${node.counts.active} active`;
  tag.textContent = about;
  li.append(id, tag);
  if (node.children && node.children.length) {
    const ul = document.createElement("ul");
    for (const child of node.children) ul.append(treeNode(child));
    if (node.truncated) {
      const more = document.createElement("li");
      more.className = "muted";
      more.textContent = `… ${node.counts.specs - node.children.length} more`;
      ul.append(more);
    }
    li.append(ul);
  }
  return li;
}

function showTree(tree) {
  const ul = document.createElement("ul");
  ul.className = "tree";
  ul.append(treeNode(tree));
  $("tree").replaceChildren(ul);
}

function compare(a, b) {
  const x = a[sortKey];
  const y = b[sortKey];
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;
  if (y === null || y === undefined) return -1;
  const order = x < y ? -1 : 1;
  return sortDesc ? -order : order;
}

function showSessions() {
  const rows = [...sessions].sort(compare);
  const body = document.querySelector("#sessions tbody");
  body.replaceChildren();
  for (const info of rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = info.id;
    if (info.id === selected) tr.className = "selected";
    const idle = info.last_active_s === null ? null : info.last_active_s.toFixed(1);
    for (const [value, cls] of [
      [info.id, ""],
      [info.state, `state-${info.state}`],
      [info.agent, ""],
      [info.queued_runs, ""],
      [info.messages, ""],
      [idle, ""],
    ]) {
      const td = document.createElement("td");
      td.className = cls;
      text(td, value);
      tr.append(td);
    }
    tr.addEventListener("click", () => inspect(info.id));
    body.append(tr);
  }
  text($("session-count"), `(${sessions.length} shown)`);
  for (const th of document.querySelectorAll("#sessions th")) {
    th.classList.toggle("sorted", th.dataset.key === sortKey);
    th.classList.toggle("desc", th.dataset.key === sortKey && sortDesc);
  }
}

async function inspect(id) {
  selected = id;
  text($("inspect-id"), id);
  showSessions();
  const response = await fetch(`api/sessions/${encodeURIComponent(id)}`);
  $("inspect").textContent = JSON.stringify(await response.json(), null, 2);
}

async function poll() {
  try {
    const response = await fetch("api/state", { cache: "no-store" });
    const state = await response.json();
    if (!response.ok) {
      status(state.error.code === "RUNTIME_STOPPED" ? "runtime stopped" : state.error.code, "stopped");
    } else {
      showCounters(state);
      showLatency(state.latency_ms);
      showTree(state.tree);
      sessions = state.sessions;
      showSessions();
      if (!stopped) status("live", "live");
      $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
    }
  } catch (error) {
    status("unreachable", "stopped");
  }
  setTimeout(poll, POLL_MS);
}

function follow() {
  const list = $("events");
  const source = new EventSource("api/events?pattern=*");
  // Subscribed on the server before the response began: every later event will arrive.
  source.onopen = () => {
    document.body.dataset.events = "open";
  };
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    const li = document.createElement("li");
    if (event.type === "run.failed") li.className = "ev-failed";
    if (event.type === "run.completed") li.className = "ev-completed";
    const code = event.data && event.data.code ? ` ${event.data.code}` : "";
    const time = new Date(event.time_ns / 1e6).toLocaleTimeString();
    li.textContent = `${time}  ${event.type.padEnd(16)} ${event.session_id}  ${event.run_id}${code}`;
    list.prepend(li);
    while (list.children.length > MAX_EVENTS) list.lastChild.remove();
  };
  source.addEventListener("end", () => {
    stopped = true;
    source.close();
    document.body.dataset.events = "ended";
    status("runtime stopped", "stopped");
  });
}

for (const th of document.querySelectorAll("#sessions th")) {
  th.addEventListener("click", () => {
    if (sortKey === th.dataset.key) sortDesc = !sortDesc;
    else {
      sortKey = th.dataset.key;
      sortDesc = false;
    }
    showSessions();
  });
}

follow();
poll();
