// storeprint LAN page: printers, queues and tickets that need a person,
// updated live from /v1/events. No external resources: it works with the
// internet down.
"use strict";

const T = {
  en: {
    connection: "Connection", signout: "Sign out", signin_title: "Sign in", signin: "Sign in",
    signin_help: "Enter the staff token from your manager.", token: "Staff token",
    bad_token: "That token was not accepted.", alerts: "Needs a person", printers: "Printers",
    stations: "Stations", operator: "Your name", reason: "Reason", cancel: "Cancel", confirm: "Confirm",
    none: "Nothing needs a person.", empty: "Queue empty", queue: "waiting",
    ready: "Ready", offline: "Offline", paper_end: "Out of paper", cover_open: "Cover open", unknown: "Unknown",
    paper_near_end: "Paper running low",
    r_uncertain: "May have printed — check the pass", r_stale: "Too old — held back, not printed",
    r_retries: "Could not print — retries used up", r_failed: "Could not print",
    retry: "Print again", resolve: "It printed", reprint: "Copy", test_page: "Test page",
    print_stale: "Print held tickets", acknowledge: "Acknowledge", failback: "Move back",
    failover: "{printer} failed — {stations} now print on {backup}", failover_done: "{printer} failed over to {backup} earlier (moved back)",
    storage: "Storage trouble — new orders are refused: {error}",
    r_recovered: "Data recovered after damage — may have printed, check the pass",
    recovered: "The gateway's data was recovered ({at}): {cause}. Waiting tickets were held for a person.",
    recovered_missing: "{n} tickets accepted before that are missing and cannot be listed.",
    q_retry: "Print {task} again?", q_resolve: "Close {task} as printed? Only if you saw the paper.",
    q_reprint: "Print a copy of {task}, marked REPRINT?", q_test: "Print a test page on {printer}?",
    q_stale: "Print the held tickets of {station}?", q_ack: "Acknowledge the failover of {printer}?",
    q_failback: "Move {printer}'s stations back to it?", done_msg: "Done", table: "Table",
    queued: "queued", printing: "printing", retry_wait: "waiting to retry", attention_required: "needs a person", failed: "failed",
    backup_from: "backup for {printer}",
    cloud_up: "HQ linked", cloud_behind: "HQ linked · {n} to send", cloud_down: "HQ offline · printing goes on · {n} to send",
  },
  zh: {
    connection: "连接", signout: "退出", signin_title: "登录", signin: "登录",
    signin_help: "请输入店长提供的员工令牌。", token: "员工令牌",
    bad_token: "令牌无效。", alerts: "需要处理", printers: "打印机",
    stations: "档口", operator: "您的姓名", reason: "原因", cancel: "取消", confirm: "确认",
    none: "暂无需要处理的小票。", empty: "队列为空", queue: "张待打",
    ready: "就绪", offline: "离线", paper_end: "缺纸", cover_open: "纸仓盖打开", unknown: "未知",
    paper_near_end: "纸快用完",
    r_uncertain: "可能已打印，请到出餐口确认", r_stale: "超时未打印，已暂停",
    r_retries: "无法打印，重试已用完", r_failed: "无法打印",
    retry: "补打", resolve: "已出单", reprint: "复制一张", test_page: "测试页",
    print_stale: "打印暂停的小票", acknowledge: "已知悉", failback: "切回",
    failover: "{printer} 故障，{stations} 已转到 {backup} 打印", failover_done: "{printer} 曾转到 {backup}（已切回）",
    storage: "存储故障，暂停接单：{error}",
    r_recovered: "数据损坏后已恢复，可能已打印，请到出餐口确认",
    recovered: "网关数据已恢复（{at}）：{cause}。待打小票已暂停，等待人工处理。",
    recovered_missing: "此前接收的 {n} 张小票已丢失，无法列出。",
    q_retry: "补打 {task}？", q_resolve: "确认 {task} 已出单？仅在看到小票时确认。",
    q_reprint: "复制打印 {task}（带重打标记）？", q_test: "在 {printer} 打印测试页？",
    q_stale: "打印 {station} 暂停的小票？", q_ack: "确认已知悉 {printer} 的故障转移？",
    q_failback: "把 {printer} 的档口切回？", done_msg: "完成", table: "桌号",
    queued: "排队中", printing: "打印中", retry_wait: "等待重试", attention_required: "需要处理", failed: "失败",
    backup_from: "代 {printer} 打印",
    cloud_up: "总部已连接", cloud_behind: "总部已连接 · 待同步 {n} 条", cloud_down: "总部离线 · 照常打印 · 待同步 {n} 条",
  },
};

const store = window.localStorage;
let lang = store.getItem("storeprint.lang") || ((navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en");
let token = store.getItem("storeprint.token") || "";
let board = null;
let stream = null;

function t(key, vars) {
  let s = (T[lang] && T[lang][key]) || T.en[key] || key;
  for (const k in vars || {}) s = s.split("{" + k + "}").join(vars[k]);
  return s;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === "class") e.className = attrs[k];
    else if (k === "onclick") e.addEventListener("click", attrs[k]);
    else if (k.startsWith("data-") || k === "type" || k === "title" || k === "role") e.setAttribute(k, attrs[k]);
    else e[k] = attrs[k];
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function applyStatic() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.getElementById("lang").textContent = lang === "zh" ? "English" : "中文";
  for (const e of document.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll("[data-i18n-placeholder]")) e.placeholder = t(e.dataset.i18nPlaceholder);
  for (const e of document.querySelectorAll("[data-i18n-title]")) e.title = t(e.dataset.i18nTitle);
}

function show(signedIn) {
  document.getElementById("signin").hidden = signedIn;
  document.getElementById("app").hidden = !signedIn;
  document.getElementById("signout").hidden = !signedIn;
}

function signOut(message) {
  token = "";
  store.removeItem("storeprint.token");
  if (stream) stream.abort();
  show(false);
  document.getElementById("signin-error").textContent = message || "";
}

async function api(method, path, body) {
  const resp = await fetch(path, {
    method, headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (resp.status === 401) { signOut(t("bad_token")); throw new Error(t("bad_token")); }
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  return data;
}

// Live updates: a server-sent event stream read with fetch, so the token
// travels in a header, never in a URL.
async function connect() {
  const live = document.getElementById("live");
  let wait = 500;
  while (token) {
    stream = new AbortController();
    try {
      const resp = await fetch("/v1/events", { headers: { "Authorization": "Bearer " + token }, signal: stream.signal });
      if (resp.status === 401) { signOut(t("bad_token")); return; }
      if (!resp.ok || !resp.body) throw new Error(resp.statusText);
      show(true);
      live.className = "dot live";
      wait = 500;
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const chunk = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = chunk.split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(5).trimStart()).join("\n");
          if (data) { board = JSON.parse(data); render(); }
        }
      }
    } catch (e) {
      if (!token) return;
    }
    live.className = "dot down";
    await new Promise(r => setTimeout(r, wait));
    wait = Math.min(wait * 2, 5000);
  }
}

function statusWords(p) {
  return t(p.status) + (p.paper_near_end && p.status === "ready" ? " · " + t("paper_near_end") : "");
}

function reasonWords(task) {
  if (task.status === "failed") return task.reason === "retries" ? t("r_retries") : t("r_failed");
  if (task.reason === "stale") return t("r_stale");
  if (task.reason === "recovered") return t("r_recovered");
  return t("r_uncertain");
}

function itemsText(task) {
  return (task.items || []).map(i => i.qty + "× " + i.name + (i.note ? " (" + i.note + ")" : "")).join(", ");
}

function render() {
  if (!board) return;
  document.getElementById("store").textContent = "storeprint · " + board.store_id;
  const cloud = document.getElementById("cloud");
  cloud.hidden = !board.cloud;
  if (board.cloud) {
    const n = board.cloud.pending || 0;
    cloud.className = "chip" + (board.cloud.connected ? "" : " down");
    cloud.dataset.connected = board.cloud.connected ? "true" : "false";
    cloud.textContent = t(!board.cloud.connected ? "cloud_down" : n > 0 ? "cloud_behind" : "cloud_up", { n });
  }

  const banners = document.getElementById("banners");
  banners.replaceChildren();
  if (board.storage_error) banners.append(el("div", { class: "banner", role: "alert" }, t("storage", { error: board.storage_error })));
  const rec = board.storage && board.storage.recovery;
  if (rec && Date.now() - Date.parse(rec.at) < 7 * 24 * 3600 * 1000) {
    banners.append(el("div", { class: "banner", "data-recovery": "true", role: "alert" },
      t("recovered", { at: new Date(rec.at).toLocaleString(), cause: rec.cause }) + (rec.missing_tasks > 0 ? " " + t("recovered_missing", { n: rec.missing_tasks }) : "")));
  }
  for (const p of board.printers) {
    const f = p.failover;
    if (!f) continue;
    const text = f.active ? t("failover", { printer: p.id, backup: f.backup, stations: p.stations.join(", ") })
      : t("failover_done", { printer: p.id, backup: f.backup });
    banners.append(el("div", { class: "banner", "data-failover": p.id, role: "alert" }, el("span", {}, text),
      el("span", { class: "row" },
        !f.acknowledged && el("button", { class: "big danger", type: "button", "data-action": "acknowledge",
          onclick: () => act("q_ack", { printer: p.id }, "POST", "/v1/printers/" + encodeURIComponent(p.id) + "/acknowledge") }, t("acknowledge")),
        f.active && el("button", { class: "big danger", type: "button", "data-action": "failback",
          onclick: () => act("q_failback", { printer: p.id }, "POST", "/v1/printers/" + encodeURIComponent(p.id) + "/failback") }, t("failback")))));
  }

  const alerts = document.getElementById("alerts");
  alerts.replaceChildren();
  if (board.alerts.length === 0) alerts.append(el("p", { class: "muted" }, t("none")));
  for (const a of board.alerts) {
    const path = "/v1/tasks/" + encodeURIComponent(a.task_no);
    alerts.append(el("div", { class: "card bad", "data-task": a.task_no, "data-status": a.status },
      el("h3", {}, a.station ? a.station + " · " + (a.table ? t("table") + " " + a.table : a.order_id) : a.task_no),
      el("div", { class: "state bad" }, reasonWords(a)),
      el("div", { class: "items" }, itemsText(a)),
      el("div", { class: "muted" }, a.task_no + (a.last_error ? " — " + a.last_error : "")),
      el("div", { class: "row" },
        el("button", { class: "big", type: "button", "data-action": "retry", onclick: () => act("q_retry", { task: a.task_no }, "POST", path + "/retry") }, t("retry")),
        a.status === "attention_required" && a.reason !== "stale" && el("button", { class: "big secondary", type: "button", "data-action": "resolve",
          onclick: () => act("q_resolve", { task: a.task_no }, "POST", path + "/resolve", { outcome: "printed" }) }, t("resolve")),
        el("button", { class: "big secondary", type: "button", "data-action": "reprint", onclick: () => act("q_reprint", { task: a.task_no }, "POST", path + "/reprint") }, t("reprint")))));
  }

  const printers = document.getElementById("printers");
  printers.replaceChildren();
  for (const p of board.printers) {
    const ok = p.status === "ready";
    printers.append(el("div", { class: "card " + (ok ? "ok" : "bad"), "data-printer": p.id, "data-status": p.status },
      el("h3", {}, p.id),
      el("div", { class: "state " + (ok ? "ok" : "bad") }, statusWords(p)),
      el("div", { class: "muted" }, p.queue + " " + t("queue") + (p.stations.length ? " · " + p.stations.join(", ") : "")),
      p.last_error && !ok && el("div", { class: "muted" }, p.last_error),
      el("div", { class: "row" }, el("button", { class: "small secondary", type: "button", "data-action": "test-page",
        onclick: () => act("q_test", { printer: p.id }, "POST", "/v1/printers/" + encodeURIComponent(p.id) + "/test-page") }, t("test_page")))));
  }

  const stations = document.getElementById("stations");
  stations.replaceChildren();
  for (const s of board.stations) {
    const held = board.alerts.filter(a => a.station === s.name && a.reason === "stale").length;
    stations.append(el("div", { class: "card" + (s.backup_from ? " warn" : ""), "data-station": s.name },
      el("h3", {}, s.name + " → " + s.printer),
      s.backup_from && el("div", { class: "muted" }, t("backup_from", { printer: s.backup_from })),
      s.queue.length === 0 ? el("div", { class: "muted" }, t("empty")) :
        el("ul", { class: "queue" }, s.queue.map(q => el("li", {}, (q.table ? q.table + " · " : "") + itemsText(q) + " — " + t(q.status)))),
      held > 0 && el("div", { class: "row" }, el("button", { class: "big", type: "button", "data-action": "print-stale",
        onclick: () => act("q_stale", { station: s.name }, "POST", "/v1/stations/" + encodeURIComponent(s.name) + "/print-stale") }, t("print_stale") + " (" + held + ")"))));
  }
}

// act asks who and why, then calls the API.
function act(question, vars, method, path, extra) {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = t(question, vars);
  document.getElementById("confirm-text").textContent = "";
  document.getElementById("confirm-error").textContent = "";
  const op = document.getElementById("operator");
  op.value = store.getItem("storeprint.operator") || "";
  document.getElementById("reason").value = "";
  const form = document.getElementById("confirm-form");
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const operator = op.value.trim();
    if (!operator) { op.focus(); return; }
    store.setItem("storeprint.operator", operator);
    const body = Object.assign({ operator, reason: document.getElementById("reason").value.trim() || t(question, vars) }, extra || {});
    try {
      await api(method, path, body);
      dlg.close();
    } catch (e) {
      document.getElementById("confirm-error").textContent = e.message;
    }
  };
  document.getElementById("confirm-cancel").onclick = () => dlg.close();
  dlg.showModal();
  (op.value ? document.getElementById("confirm-ok") : op).focus();
}

function start() {
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    // A setup link: keep the token, take it out of the address bar.
    token = params.get("token");
    store.setItem("storeprint.token", token);
    history.replaceState(null, "", location.pathname);
  }
  applyStatic();
  document.getElementById("lang").onclick = () => {
    lang = lang === "zh" ? "en" : "zh";
    store.setItem("storeprint.lang", lang);
    applyStatic();
    render();
  };
  document.getElementById("signout").onclick = () => signOut("");
  document.getElementById("signin-form").onsubmit = (ev) => {
    ev.preventDefault();
    const input = document.getElementById("token");
    token = input.value.trim();
    input.value = "";
    store.setItem("storeprint.token", token);
    document.getElementById("signin-error").textContent = "";
    connect();
  };
  if (token) connect(); else show(false);
}

start();
