// The observer page: polls api/state, api/runs, api/approvals and api/schedules every second, api/series
// every five, and follows api/events (server-sent events). Paths are relative, so the page
// works wherever the host mounts the app. Actions are POSTs carrying the page's token.
"use strict";

const POLL_MS = 1000;
const SERIES_MS = 5000;
const MAX_EVENTS = 200;
const PAGE_SIZE = 100;
let sortKey = "id";
let sortDesc = false;
let offset = 0;
let more = false;
let sessions = [];
let selected = null;
let selectedRun = null;
let stopped = false;
const TOKEN = document.querySelector('meta[name="praxo-token"]').content;

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


function showSessions() {
  const body = document.querySelector("#sessions tbody");
  body.replaceChildren();
  for (const info of sessions) {
    const tr = document.createElement("tr");
    tr.dataset.id = info.id;
    tr.className = info.id === selected ? "pick selected" : "pick";
    tr.tabIndex = 0;
    tr.setAttribute("aria-label", `session ${info.id}: inspect`);
    const idle = info.last_active_s === null ? null : info.last_active_s.toFixed(1);
    for (const [value, cls] of [
      [info.id, ""],
      [info.state, `state-${info.state}`],
      [info.agent, ""],
      [info.queued_runs, ""],
      [info.messages, ""],
      [bytes(info.memory_bytes), ""],
      [idle, ""],
    ]) {
      const td = document.createElement("td");
      td.className = cls;
      text(td, value);
      tr.append(td);
    }
    const actions = document.createElement("td");
    const live = info.state === "live";
    actions.append(
      actionButton("stop", `stop ${info.id}`, !live, () => act(`api/stop/${encodeURIComponent(info.id)}`)),
      " ",
      actionButton("passivate", `passivate ${info.id}`, !live, () =>
        act(`api/passivate/${encodeURIComponent(info.id)}`),
      ),
    );
    tr.append(actions);
    activate(tr, () => inspect(info.id));
    body.append(tr);
  }
  const first = sessions.length ? offset + 1 : 0;
  text($("session-count"), `(${first}–${offset + sessions.length}${more ? ", more" : ""})`);
  text($("page-label"), `page ${Math.floor(offset / PAGE_SIZE) + 1}`);
  $("prev-page").disabled = offset === 0;
  $("next-page").disabled = !more;
  for (const th of document.querySelectorAll("#sessions th[data-key]")) {
    const sorted = th.dataset.key === sortKey;
    th.setAttribute("aria-sort", sorted ? (sortDesc ? "descending" : "ascending") : "none");
  }
}

function bytes(value) {
  if (value === null || value === undefined) return null;
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

// A row that acts like a button: click, Enter or Space (not when a button inside is used).
function activate(row, action) {
  row.addEventListener("click", (event) => {
    if (!event.target.closest("button")) action();
  });
  row.addEventListener("keydown", (event) => {
    if (event.target !== row) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      action();
    }
  });
}

function actionButton(label, name, disabled, action) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "act";
  button.textContent = label;
  button.setAttribute("aria-label", name);
  button.disabled = disabled;
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    button.disabled = true;
    action();
  });
  return button;
}

async function act(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "X-Praxo-Token": TOKEN, "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  const answer = await response.json();
  document.body.dataset.lastAction = response.ok ? "ok" : answer.error.code;
  refresh();
  return answer;
}

async function inspect(id) {
  selected = id;
  text($("inspect-id"), id);
  showSessions();
  const response = await fetch(`api/sessions/${encodeURIComponent(id)}`);
  $("inspect").textContent = JSON.stringify(await response.json(), null, 2);
}

function showApprovals(approvals) {
  const box = $("approvals");
  box.replaceChildren();
  text($("approval-count"), `(${approvals.length})`);
  if (!approvals.length) {
    const none = document.createElement("p");
    none.className = "muted";
    none.textContent = "nothing waits for a person";
    box.append(none);
  }
  for (const item of approvals) {
    const div = document.createElement("div");
    div.className = "approval";
    div.dataset.session = item.session_id;
    const what = document.createElement("div");
    what.textContent = `${item.session_id} · ${item.tool} · ${item.agent || "–"}`;
    const args = document.createElement("pre");
    const shown = JSON.stringify(item.arguments);
    args.textContent = item.arguments_redacted ? `${shown}  (redacted)` : shown;
    const path = `api/approvals/${encodeURIComponent(item.session_id)}`;
    div.append(
      what,
      args,
      actionButton("approve", `approve ${item.tool} for ${item.session_id}`, false, () =>
        act(path, { approved: true }),
      ),
      " ",
      actionButton("deny", `deny ${item.tool} for ${item.session_id}`, false, () =>
        act(path, { approved: false }),
      ),
    );
    box.append(div);
  }
}

function showRuns(runs) {
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  for (const run of runs) {
    const tr = document.createElement("tr");
    tr.className = run.run_id === selectedRun ? "pick selected" : "pick";
    tr.dataset.run = run.run_id;
    tr.tabIndex = 0;
    tr.setAttribute("aria-label", `run ${run.run_id}: show its timeline`);
    const started = new Date(run.started_at * 1000).toLocaleTimeString();
    const duration = run.duration_ms === null ? null : run.duration_ms.toFixed(1);
    for (const [value, cls] of [
      [run.run_id, ""],
      [run.session_id, ""],
      [run.agent, ""],
      [run.status, `status-${run.status}`],
      [started, ""],
      [duration, ""],
      [run.error_code, run.error_code ? "status-failed" : ""],
    ]) {
      const td = document.createElement("td");
      td.className = cls;
      text(td, value);
      tr.append(td);
    }
    activate(tr, () => timeline(run.run_id));
    body.append(tr);
  }
}

async function timeline(runId) {
  selectedRun = runId;
  text($("timeline-id"), runId);
  const response = await fetch(`api/runs/${encodeURIComponent(runId)}`);
  const answer = await response.json();
  const list = $("timeline");
  list.replaceChildren();
  if (!response.ok) return;
  const start = answer.events.length ? answer.events[0].time_ns : 0;
  for (const event of answer.events) {
    const li = document.createElement("li");
    const at = ((event.time_ns - start) / 1e6).toFixed(1).padStart(8);
    const code = event.data && event.data.code ? ` ${event.data.code}` : "";
    li.textContent = `+${at} ms  #${event.seq} ${event.type}${code}`;
    if (event.type === "run.failed") li.className = "ev-failed";
    if (event.type === "run.completed") li.className = "ev-completed";
    list.append(li);
  }
}

function when(item) {
  if (item.kind === "every") return `every ${item.every} s`;
  if (item.kind === "cron") return `cron ${item.cron}${item.tz ? " " + item.tz : ""}`;
  return item.kind;
}

function showSchedules(schedules) {
  const body = document.querySelector("#schedules tbody");
  body.replaceChildren();
  text($("schedule-count"), `(${schedules.length})`);
  for (const item of schedules) {
    const tr = document.createElement("tr");
    tr.dataset.schedule = item.id;
    const outcome = item.last_error ? `${item.last_outcome} ${item.last_error}` : item.last_outcome;
    const cls = item.last_outcome === "failed" ? "status-failed" : item.last_outcome === "fired" ? "status-completed" : "";
    for (const [value, c] of [
      [item.session_id, ""],
      [item.key || item.id, ""],
      [when(item), ""],
      [new Date(item.next_fire).toLocaleString(), ""],
      [item.fired, ""],
      [outcome, cls],
      [item.last_run_id, ""],
    ]) {
      const td = document.createElement("td");
      td.className = c;
      text(td, value);
      tr.append(td);
    }
    const actions = document.createElement("td");
    actions.append(
      actionButton("cancel", `cancel schedule ${item.key || item.id} of ${item.session_id}`, false, () =>
        act(`api/schedules/${encodeURIComponent(item.id)}/cancel`),
      ),
    );
    tr.append(actions);
    body.append(tr);
  }
}

const SVG = "http://www.w3.org/2000/svg";

// Draw lines over the 15 minutes: each series is [values, colour]; null values leave gaps.
function chart(id, series) {
  const svg = $(id);
  const width = 300;
  const height = 70;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.replaceChildren();
  const all = series.flatMap(([values]) => values.filter((v) => v !== null));
  const top = Math.max(1e-9, ...all);
  for (const [values, colour] of series) {
    let d = "";
    let pen = false;
    values.forEach((value, index) => {
      if (value === null) {
        pen = false;
        return;
      }
      const x = (index / Math.max(1, values.length - 1)) * width;
      const y = height - 2 - (value / top) * (height - 4);
      d += `${pen ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`;
      pen = true;
    });
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d || "M0,0");
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", colour);
    path.setAttribute("stroke-width", "1.5");
    path.setAttribute("vector-effect", "non-scaling-stroke");
    svg.append(path);
  }
}

function last(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i];
  return null;
}

function showSeries(answer) {
  const pick = (key) => answer.points.map((p) => p[key]);
  const live = pick("live_sessions");
  const runs = pick("runs_per_s");
  const failures = pick("failures_per_s");
  const p50 = pick("p50");
  const p99 = pick("p99");
  chart("chart-live", [[live, "#5cc98b"]]);
  chart("chart-runs", [[runs, "#6cb6ff"]]);
  chart("chart-failures", [[failures, "#ef6b73"]]);
  chart("chart-latency", [
    [p99, "#e7b85c"],
    [p50, "#6cb6ff"],
  ]);
  text($("now-live"), last(live));
  text($("now-runs"), last(runs));
  text($("now-failures"), last(failures));
  const [a, b] = [last(p50), last(p99)];
  text($("now-latency"), a === null ? null : `${a.toFixed(0)} / ${b.toFixed(0)}`);
  document.body.dataset.series = String(answer.points.length);
}

function stateQuery() {
  const params = new URLSearchParams({
    limit: String(PAGE_SIZE),
    offset: String(offset),
    sort: sortKey,
    desc: sortDesc ? "1" : "0",
    memory: "1",
  });
  return `api/state?${params}`;
}

async function pollState() {
  const response = await fetch(stateQuery(), { cache: "no-store" });
  const state = await response.json();
  if (!response.ok) {
    status(state.error.code === "RUNTIME_STOPPED" ? "runtime stopped" : state.error.code, "stopped");
    return;
  }
  showCounters(state);
  showLatency(state.latency_ms);
  showTree(state.tree);
  sessions = state.sessions;
  more = state.page.more;
  showSessions();
  if (!stopped) status("live", "live");
  $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

async function pollRuns() {
  const wanted = $("run-status").value;
  const response = await fetch(`api/runs?limit=50${wanted ? `&status=${wanted}` : ""}`);
  if (response.ok) showRuns((await response.json()).runs);
}

async function pollApprovals() {
  const response = await fetch("api/approvals", { cache: "no-store" });
  if (response.ok) showApprovals((await response.json()).approvals);
}

async function pollSchedules() {
  const response = await fetch("api/schedules", { cache: "no-store" });
  if (response.ok) showSchedules((await response.json()).schedules);
}

async function pollSeries() {
  const response = await fetch("api/series", { cache: "no-store" });
  if (response.ok) showSeries(await response.json());
}

let refreshing = null;

// One refresh at a time; a refresh asked for meanwhile runs after it.
function refresh() {
  if (refreshing) return refreshing.then(refresh);
  refreshing = Promise.all([pollState(), pollRuns(), pollApprovals(), pollSchedules()])
    .catch(() => status("unreachable", "stopped"))
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

async function poll() {
  await refresh();
  setTimeout(poll, POLL_MS);
}

async function series() {
  try {
    await pollSeries();
  } catch (error) {
    // The state poll says the observer is unreachable.
  }
  setTimeout(series, SERIES_MS);
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

for (const th of document.querySelectorAll("#sessions th[data-key]")) {
  th.querySelector("button").addEventListener("click", () => {
    if (sortKey === th.dataset.key) sortDesc = !sortDesc;
    else {
      sortKey = th.dataset.key;
      sortDesc = false;
    }
    offset = 0;
    showSessions();
    refresh();
  });
}
$("prev-page").addEventListener("click", () => {
  offset = Math.max(0, offset - PAGE_SIZE);
  refresh();
});
$("next-page").addEventListener("click", () => {
  offset += PAGE_SIZE;
  refresh();
});
$("run-status").addEventListener("change", () => refresh());

follow();
poll();
series();
