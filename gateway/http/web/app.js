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
    retry: "Print again", resolve: "It printed", reprint: "Copy", test_page: "Test page",
    print_stale: "Print held tickets", acknowledge: "Acknowledge", failback: "Move back",
    failover: "Printer {printer} failed: the tickets of {stations} now print on printer {backup}",
    failover_done: "Printer {printer} failed earlier; its tickets printed on printer {backup} (moved back since)",
    backup_fault: "Printer {backup} cannot print either: {words}",
    no_backup: "No printer can take the tickets of printer {printer}: its backup printers ({backups}) cannot print either. The tickets wait.",
    station_one: "station {names}", station_many: "stations {names}", printer_named: "Printer {id}",
    station_title: "Station {names}",
    station_heading: "Station {name} → printer {printer}",
    retry_help: "Print again: for a ticket that did not come out; prints it now, marked REPRINT.",
    reprint_help: "Copy: for a ticket that came out and is needed once more; prints an extra copy, marked REPRINT.",
    storage: "Storage trouble — new orders are refused: {error}",
    recovered: "The gateway's data was recovered ({at}): {cause}. Waiting tickets were held for a person.",
    recovered_missing: "{n} tickets accepted before that are missing and cannot be listed.",
    q_retry: "Print {task} again?", q_resolve: "Close {task} as printed? Only if you saw the paper.",
    q_reprint: "Print a copy of {task}, marked REPRINT?", q_test: "Print a test page on {printer}?",
    q_stale: "Print the held tickets of {station}?", q_ack: "Acknowledge the failover of {printer}?",
    q_failback: "Move {printer}'s stations back to it?", done_msg: "Done", table: "Table",
    queued: "queued", printing: "printing", retry_wait: "waiting to retry", attention_required: "needs a person", failed: "failed",
    backup_from: "printing for printer {printer}, which failed", display: "Screen", display_backup: "backup {printer}",
    display_stale: "{n} on the screen too long: nobody bumped them", on_screen_stale: "on the screen too long, not bumped",
    cluster: "Node {node}: {role}", cluster_leader: "leader", cluster_follower: "follower",
    cluster_candidate: "electing", cluster_witness: "witness", cluster_down: "{nodes} down",
    cluster_none: "no leader",
    cloud_up: "HQ linked", cloud_behind: "HQ linked · {n} to send", cloud_down: "HQ offline · printing goes on · {n} to send",
    credential_shared: "This gateway's HQ credential is in use on another box too: their links to HQ keep replacing each other. Keep the credential on one box: stop the other, or give it its own gateway credential.",
    pair_title: "Pair this device", pair_help: "Enter the six digits shown on the gateway's page and a name for this device.",
    pair_code_label: "Pairing code", device_name: "Device name", pair: "Pair", devices: "Devices",
    pair_new: "Pair a new device", role: "Role", pairing_create: "Show a pairing code", pairing_code: "Pairing code",
    expires: "Valid until {time}, once", tls_fingerprint: "Certificate SHA-256", whoami: "Signed in: {name} ({role})",
    role_pos: "POS", role_staff: "Staff", role_admin: "Admin", role_display: "Kitchen screen", revoke: "Revoke", q_revoke: "Revoke {device}? Its token stops working at once.",
    last_used: "last used {time}", never_used: "not used yet", bad_code: "That code was not accepted.",
    details: "Details", force: "Do it anyway", waited: "waiting {age}", age_s: "{n} s", age_m: "{n} min", age_h: "{n} h {m} min",
  },
  zh: {
    connection: "连接", signout: "退出", signin_title: "登录", signin: "登录",
    signin_help: "请输入店长提供的员工令牌。", token: "员工令牌",
    bad_token: "令牌无效。", alerts: "需要处理", printers: "打印机",
    stations: "档口", operator: "您的姓名", reason: "原因", cancel: "取消", confirm: "确认",
    none: "暂无需要处理的小票。", empty: "队列为空", queue: "张待打",
    ready: "就绪", offline: "离线", paper_end: "缺纸", cover_open: "纸仓盖打开", unknown: "未知",
    paper_near_end: "纸快用完",
    retry: "补打", resolve: "已出单", reprint: "复制一张", test_page: "测试页",
    print_stale: "打印暂停的小票", acknowledge: "已知悉", failback: "切回",
    failover: "打印机 {printer} 故障：{stations} 的小票已转到打印机 {backup} 打印",
    failover_done: "打印机 {printer} 曾故障，小票曾转到打印机 {backup}（已切回）",
    backup_fault: "打印机 {backup} 也无法打印：{words}",
    no_backup: "没有打印机能接打印机 {printer} 的小票：它的备用打印机（{backups}）也都无法打印。小票在等待。",
    station_one: "档口 {names} ", station_many: "档口 {names} ", printer_named: "打印机 {id}",
    station_title: "档口 {names}",
    station_heading: "档口 {name} → 打印机 {printer}",
    retry_help: "补打：小票没出来时用，立即重新打印，带重打标记。",
    reprint_help: "复制一张：小票已出但还需要一张时用，多打一张，带重打标记。",
    storage: "存储故障，暂停接单：{error}",
    recovered: "网关数据已恢复（{at}）：{cause}。待打小票已暂停，等待人工处理。",
    recovered_missing: "此前接收的 {n} 张小票已丢失，无法列出。",
    q_retry: "补打 {task}？", q_resolve: "确认 {task} 已出单？仅在看到小票时确认。",
    q_reprint: "复制打印 {task}（带重打标记）？", q_test: "在 {printer} 打印测试页？",
    q_stale: "打印 {station} 暂停的小票？", q_ack: "确认已知悉 {printer} 的故障转移？",
    q_failback: "把 {printer} 的档口切回？", done_msg: "完成", table: "桌号",
    queued: "排队中", printing: "打印中", retry_wait: "等待重试", attention_required: "需要处理", failed: "失败",
    backup_from: "代故障打印机 {printer} 打印", display: "屏幕", display_backup: "备用 {printer}",
    display_stale: "{n} 张在屏幕上过久未划单", on_screen_stale: "在屏幕上过久未划单",
    cluster: "节点 {node}：{role}", cluster_leader: "主节点", cluster_follower: "从节点",
    cluster_candidate: "选举中", cluster_witness: "见证节点", cluster_down: "{nodes} 离线",
    cluster_none: "无主节点",
    cloud_up: "总部已连接", cloud_behind: "总部已连接 · 待同步 {n} 条", cloud_down: "总部离线 · 照常打印 · 待同步 {n} 条",
    credential_shared: "本网关的总部凭证也在另一台设备上使用：两者与总部的连接不断互相替换。请只在一台设备上使用该凭证：停用另一台，或为它创建自己的网关凭证。",
    pair_title: "配对本设备", pair_help: "请输入网关页面上显示的六位配对码，并为本设备命名。",
    pair_code_label: "配对码", device_name: "设备名称", pair: "配对", devices: "设备",
    pair_new: "配对新设备", role: "角色", pairing_create: "显示配对码", pairing_code: "配对码",
    expires: "{time} 前有效，仅限一次", tls_fingerprint: "证书 SHA-256", whoami: "已登录：{name}（{role}）",
    role_pos: "收银", role_staff: "员工", role_admin: "管理员", role_display: "厨房屏幕", revoke: "吊销", q_revoke: "吊销 {device}？其令牌将立即失效。",
    last_used: "最近使用 {time}", never_used: "尚未使用", bad_code: "配对码无效。",
    details: "详情", force: "仍然执行", waited: "已等 {age}", age_s: "{n} 秒", age_m: "{n} 分钟", age_h: "{n} 小时 {m} 分",
  },
};

const store = window.localStorage;
let lang = store.getItem("storeprint.lang") || ((navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en");
let token = store.getItem("storeprint.token") || "";
let board = null;
let boardAt = 0; // when the board arrived, for the tickets' ages
let stream = null;
let words = {}; // the catalogue: word → language → text (GET /v1/words)
let me = null; // the token's role and device (GET /v1/me)
const ROLES = ["pos", "staff", "admin"];

// may reports whether the signed-in token's role allows what needs role.
function may(role) {
  return !!me && ROLES.indexOf(me.role) >= ROLES.indexOf(role);
}

// say returns a word of the catalogue in the page's language.
function say(word) {
  const w = words[word] || {};
  return w[lang] || w.en || "";
}

// details is the technical side of something, folded away: the words for
// people come first, the error text for IT behind a toggle.
// A details the reader opened stays open when the page redraws on the next
// update: openDetails holds the keys of those open now.
const openDetails = new Set();

function details(key, ...lines) {
  const text = lines.filter(Boolean);
  if (text.length === 0) return null;
  return el("details", { "data-details": key, open: openDetails.has(key),
    ontoggle: e => e.target.open ? openDetails.add(key) : openDetails.delete(key) },
    el("summary", {}, t("details")), text.map(l => el("div", { class: "tech" }, l)));
}

// ageWords says how long a ticket has waited, as of now.
function ageWords(task) {
  if (task.waited_s === undefined || task.waited_s === null) return "";
  const s = task.waited_s + Math.max(0, Math.floor((Date.now() - boardAt) / 1000));
  if (s < 60) return t("waited", { age: t("age_s", { n: s }) });
  if (s < 3600) return t("waited", { age: t("age_m", { n: Math.floor(s / 60) }) });
  return t("waited", { age: t("age_h", { n: Math.floor(s / 3600), m: Math.floor(s / 60) % 60 }) });
}

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
  if (!signedIn) me = null;
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
      if (!me) await loadMe();
      show(true);
      loadCluster();
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
          if (data) { board = JSON.parse(data); boardAt = Date.now(); render(); }
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
  return (say(p.word) || t(p.status)) + (p.paper_near_end && p.status === "ready" && !p.in_trouble ? " · " + t("paper_near_end") : "");
}

// stationWords names stations as stations, never bare: a station may be
// called like a printer or a place in the kitchen ("pass").
function stationWords(names) {
  return t(names.length === 1 ? "station_one" : "station_many", { names: names.join(", ") }).trim();
}

function inTrouble(p) {
  return p.status !== "ready" || p.in_trouble;
}

function itemsText(task) {
  return (task.items || []).map(i => i.qty + "× " + i.name + (i.note ? " (" + i.note + ")" : "")).join(", ");
}

function render() {
  renderCluster();
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
  const bannered = new Set(); // printers a banner already speaks of
  if (board.storage_error) banners.append(el("div", { class: "banner", role: "alert" }, t("storage", { error: board.storage_error })));
  if (board.cloud && board.cloud.credential_shared) banners.append(el("div", { class: "banner", "data-credential-shared": "true", role: "alert" }, t("credential_shared")));
  const rec = board.storage && board.storage.recovery;
  if (rec && Date.now() - Date.parse(rec.at) < 7 * 24 * 3600 * 1000) {
    banners.append(el("div", { class: "banner", "data-recovery": "true", role: "alert" },
      t("recovered", { at: new Date(rec.at).toLocaleString(), cause: rec.cause }) + (rec.missing_tasks > 0 ? " " + t("recovered_missing", { n: rec.missing_tasks }) : "")));
  }
  for (const p of board.printers) {
    if (!p.no_backup_ready) continue;
    bannered.add(p.id);
    const chain = [];
    for (let b = p.backup; b && chain.indexOf(b) < 0; b = (board.printers.find(x => x.id === b) || {}).backup) chain.push(b);
    banners.append(el("div", { class: "banner", "data-no-backup": p.id, role: "alert" },
      el("span", {}, el("div", {}, t("no_backup", { printer: p.id, backups: chain.join(", ") })), details("no-backup/" + p.id, p.last_error))));
  }
  for (const p of board.printers.concat(board.displays || [])) {
    const f = p.failover;
    if (!f) continue;
    const text = f.active ? t("failover", { printer: p.id, backup: f.backup, stations: stationWords(p.stations) })
      : t("failover_done", { printer: p.id, backup: f.backup });
    // The backup's own trouble is said here too: the banner must not make
    // a printer that cannot print look like the way out.
    const b = board.printers.find(x => x.id === f.backup);
    const backupFault = f.active && b && inTrouble(b) && t("backup_fault", { backup: b.id, words: statusWords(b) });
    if (f.active) bannered.add(p.id);
    if (backupFault) bannered.add(b.id);
    banners.append(el("div", { class: "banner", "data-failover": p.id, role: "alert" },
      el("span", {}, el("div", {}, text), f.word && el("div", {}, say(f.word)),
        backupFault && el("div", { "data-backup-fault": b.id }, backupFault), details("failover/" + p.id, f.reason)),
      el("span", { class: "row" },
        !f.acknowledged && may("staff") && el("button", { class: "big danger", type: "button", "data-action": "acknowledge",
          onclick: () => act("q_ack", { printer: p.id }, "POST", "/v1/printers/" + encodeURIComponent(p.id) + "/acknowledge") }, t("acknowledge")),
        f.active && may("staff") && el("button", { class: "big danger", type: "button", "data-action": "failback",
          onclick: () => act("q_failback", { printer: p.id }, "POST", "/v1/printers/" + encodeURIComponent(p.id) + "/failback", {}, null, true) }, t("failback")))));
  }

  const alerts = document.getElementById("alerts");
  alerts.replaceChildren();
  // On a phone the printers come after the tickets: the ones in trouble
  // are named here, in one line each, so that the first screen says why.
  const troubled = board.printers.filter(p => inTrouble(p) && !bannered.has(p.id));
  if (troubled.length > 0) alerts.append(el("div", { class: "trouble-summary" },
    troubled.map(p => el("div", { "data-summary": p.id }, t("printer_named", { id: p.id }) + ": " + statusWords(p)))));
  if (board.alerts.length === 0) alerts.append(el("p", { class: "muted" }, t("none")));
  else alerts.append(el("div", { class: "legend muted" },
    may("staff") && el("div", { "data-help": "retry" }, t("retry_help")),
    el("div", { "data-help": "reprint" }, t("reprint_help"))));
  for (const a of board.alerts) {
    const path = "/v1/tasks/" + encodeURIComponent(a.task_no);
    alerts.append(el("div", { class: "card bad", "data-task": a.task_no, "data-status": a.status },
      el("h3", {}, a.station ? t("station_title", { names: a.station }) + " · " + (a.table ? t("table") + " " + a.table : a.order_id) : a.task_no),
      el("div", { class: "state bad" }, say(a.word)),
      el("div", { class: "items" }, itemsText(a)),
      el("div", { class: "muted" }, el("span", { class: "age" }, ageWords(a)), " · " + a.task_no),
      details("task/" + a.task_no, a.last_error),
      el("div", { class: "row" },
        may("staff") && el("button", { class: "big", type: "button", "data-action": "retry", onclick: () => act("q_retry", { task: a.task_no }, "POST", path + "/retry") }, t("retry")),
        may("staff") && a.status === "attention_required" && a.reason !== "stale" && el("button", { class: "big secondary", type: "button", "data-action": "resolve",
          onclick: () => act("q_resolve", { task: a.task_no }, "POST", path + "/resolve", { outcome: "printed" }) }, t("resolve")),
        el("button", { class: "big secondary", type: "button", "data-action": "reprint", onclick: () => act("q_reprint", { task: a.task_no }, "POST", path + "/reprint") }, t("reprint")))));
  }

  const printers = document.getElementById("printers");
  printers.replaceChildren();
  // Printers in trouble first: they are what the pass must see.
  const ordered = board.printers.slice().sort((a, b) => (inTrouble(b) ? 1 : 0) - (inTrouble(a) ? 1 : 0));
  for (const p of ordered) {
    const ok = !inTrouble(p);
    printers.append(el("div", { class: "card " + (ok ? "ok" : "bad"), "data-printer": p.id, "data-status": p.status, "data-trouble": p.in_trouble ? "true" : "false" },
      el("h3", {}, t("printer_named", { id: p.id })),
      el("div", { class: "state " + (ok ? "ok" : "bad") }, statusWords(p)),
      el("div", { class: "muted" }, p.queue + " " + t("queue") + (p.stations.length ? " · " + stationWords(p.stations) : "")),
      p.confirms_note && el("div", { class: "muted", "data-confirms": p.confirms }, say(p.confirms_note)),
      !ok && details("printer/" + p.id, p.last_error),
      may("staff") && el("div", { class: "row" }, el("button", { class: "small secondary", type: "button", "data-action": "test-page",
        onclick: () => act("q_test", { printer: p.id }, "POST", "/v1/printers/" + encodeURIComponent(p.id) + "/test-page") }, t("test_page")))));
  }

  // Kitchen screens beside the printers: red while silent.
  // A ticket on a screen past its station's stale_after is stale, as a
  // printer's ticket that could not print: red, named in its queue.
  const staleOnScreen = new Set();
  for (const d of board.displays || []) {
    for (const no of d.stale_tasks || []) staleOnScreen.add(no);
    const ok = d.state === "online" && !(d.stale > 0);
    printers.append(el("div", { class: "card " + (ok ? "ok" : "bad"), "data-display": d.id, "data-state": d.state, "data-stale": String(d.stale || 0) },
      el("h3", {}, t("display") + " " + d.id),
      el("div", { class: "state " + (d.state === "online" ? "ok" : "bad") }, say(d.word) || d.state),
      d.stale > 0 && el("div", { class: "state bad" }, t("display_stale", { n: d.stale })),
      el("div", { class: "muted" }, d.open + " " + t("queue") + (d.stations.length ? " · " + d.stations.join(", ") : "") +
        (d.backup ? " · " + t("display_backup", { printer: d.backup }) : ""))));
  }

  fillRoles(false);

  const stations = document.getElementById("stations");
  stations.replaceChildren();
  for (const s of board.stations) {
    const held = board.alerts.filter(a => a.station === s.name && a.reason === "stale").length;
    stations.append(el("div", { class: "card" + (s.backup_from ? " warn" : ""), "data-station": s.name },
      el("h3", {}, t("station_heading", { name: s.name, printer: s.printer })),
      s.backup_from && el("div", { class: "muted" }, t("backup_from", { printer: s.backup_from })),
      s.queue.length === 0 ? el("div", { class: "muted" }, t("empty")) :
        el("ul", { class: "queue" }, s.queue.map(q => el("li", { "data-task": q.task_no, class: staleOnScreen.has(q.task_no) ? "bad" : "",
          "data-stale": staleOnScreen.has(q.task_no) ? "true" : "false" }, (q.table ? q.table + " · " : "") + itemsText(q) + " — " +
          (staleOnScreen.has(q.task_no) ? t("on_screen_stale") : (say(q.word) || t(q.status))),
          el("span", { class: "muted age" }, " · " + ageWords(q))))),
      held > 0 && may("staff") && el("div", { class: "row" }, el("button", { class: "big", type: "button", "data-action": "print-stale",
        onclick: () => act("q_stale", { station: s.name }, "POST", "/v1/stations/" + encodeURIComponent(s.name) + "/print-stale") }, t("print_stale") + " (" + held + ")"))));
  }
}

// loadMe reads who the token is, and shows what that role may do.
async function loadMe() {
  me = await api("GET", "/v1/me");
  const roleWords = t("role_" + me.role);
  document.getElementById("whoami").textContent = t("whoami", { name: me.name, role: roleWords });
  document.getElementById("tls").hidden = !me.tls_fingerprint;
  document.getElementById("tls-fingerprint").textContent = me.tls_fingerprint || "";
  document.getElementById("devices-section").hidden = !may("staff");
  fillRoles(true);
  if (may("admin")) await loadDevices();
}

// fillRoles lists the roles a new device may be given; a kitchen screen
// pairs as its display, which it alone may see. Only when the list
// changed, unless forced, so that a choice being made stays.
function fillRoles(force) {
  if (!me) return;
  const sel = document.getElementById("pairing-role");
  const values = (may("admin") ? ROLES : ["pos"]).concat(((board && board.displays) || []).map(d => "display:" + d.id));
  if (!force && [...sel.options].map(o => o.value).join() === values.join()) return;
  sel.replaceChildren(...values.map(v => el("option", { value: v },
    v.startsWith("display:") ? t("role_display") + " · " + v.slice(8) : t("role_" + v))));
}

async function loadDevices() {
  const list = await api("GET", "/v1/devices");
  const box = document.getElementById("devices");
  box.replaceChildren(...list.map(d => el("div", { class: "card", "data-device": d.device_id, "data-role": d.role },
    el("h3", {}, d.name),
    el("div", { class: "muted" }, t("role_" + d.role) + " · " + d.device_id + " · " +
      (d.last_used_at ? t("last_used", { time: new Date(d.last_used_at).toLocaleString() }) : t("never_used"))),
    el("div", { class: "row" }, el("button", { class: "small secondary", type: "button", "data-action": "revoke",
      onclick: () => act("q_revoke", { device: d.name }, "DELETE", "/v1/devices/" + encodeURIComponent(d.device_id), {}, loadDevices) }, t("revoke"))))));
}

async function createPairing(ev) {
  ev.preventDefault();
  const err = document.getElementById("pairing-error");
  err.textContent = "";
  const role = document.getElementById("pairing-role").value;
  const body = role.startsWith("display:") ? { role: "display", display: role.slice(8) } : { role };
  const name = document.getElementById("pairing-name").value.trim();
  if (name) body.name = name;
  try {
    const c = await api("POST", "/v1/pairing", body);
    document.getElementById("pairing").hidden = false;
    document.getElementById("pair-code").textContent = c.code;
    document.getElementById("pair-qr").src = c.qr_png;
    document.getElementById("pair-url").textContent = c.url;
    document.getElementById("pair-expires").textContent = t("expires", { time: new Date(c.expires_at).toLocaleTimeString() });
  } catch (e) {
    err.textContent = e.message;
  }
}

// pairThis pairs this browser with a code from the gateway's page (or its
// QR code, which opens /?pair=CODE) and signs in with the new token.
async function pairThis(ev) {
  ev.preventDefault();
  const err = document.getElementById("pair-error");
  err.textContent = "";
  const resp = await fetch("/v1/pair", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ code: document.getElementById("pair-code-input").value.trim(), name: document.getElementById("pair-name").value.trim() }) });
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) { err.textContent = resp.status === 401 ? t("bad_code") : (data.error || resp.statusText); return; }
  token = data.token;
  store.setItem("storeprint.token", token);
  document.getElementById("pair-form").hidden = true;
  connect();
}

// act asks who and why, then calls the API. A forceable action refused
// with a reason (409) may be sent again with "force" once the person says
// so.
function act(question, vars, method, path, extra, after, forceable) {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = t(question, vars);
  document.getElementById("confirm-text").textContent = "";
  document.getElementById("confirm-error").textContent = "";
  const op = document.getElementById("operator");
  op.value = store.getItem("storeprint.operator") || "";
  document.getElementById("reason").value = "";
  const forceRow = document.getElementById("force-row");
  const force = document.getElementById("force");
  forceRow.hidden = true;
  force.checked = false;
  const form = document.getElementById("confirm-form");
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const operator = op.value.trim();
    if (!operator) { op.focus(); return; }
    store.setItem("storeprint.operator", operator);
    const body = Object.assign({ operator, reason: document.getElementById("reason").value.trim() || t(question, vars) }, extra || {});
    if (forceable && force.checked) body.force = true;
    try {
      await api(method, path, body);
      dlg.close();
      if (after) after();
    } catch (e) {
      document.getElementById("confirm-error").textContent = e.message;
      if (forceable) forceRow.hidden = false;
    }
  };
  document.getElementById("confirm-cancel").onclick = () => dlg.close();
  dlg.showModal();
  (op.value ? document.getElementById("confirm-ok") : op).focus();
}

async function loadWords() {
  try {
    const resp = await fetch("/v1/words");
    if (resp.ok) words = await resp.json();
  } catch (e) {
    // The page still works in the API's own words.
  }
  render();
}

// The store's cluster, as the node this page came from sees it (GET
// /v1/cluster answers on every node; 404 on a gateway that runs alone).
let cluster = null;
async function loadCluster() {
  if (!token) return;
  try {
    const resp = await fetch("/v1/cluster", { headers: { "Authorization": "Bearer " + token } });
    cluster = resp.ok ? await resp.json() : null;
  } catch (e) {
    cluster = null;
  }
  renderCluster();
}

function renderCluster() {
  const chip = document.getElementById("cluster");
  chip.hidden = !cluster;
  if (!cluster) return;
  const down = (cluster.members || []).filter(m => m.state === "down").map(m => m.node_id);
  const witness = (cluster.members || []).filter(m => m.role === "witness" && m.node_id !== cluster.node_id).map(m => m.node_id);
  let text = t("cluster", { node: cluster.node_id, role: t("cluster_" + cluster.role) });
  if (!cluster.leader) text += " · " + t("cluster_none");
  else if (cluster.role !== "leader") text += " · " + t("cluster_leader") + " " + cluster.leader;
  if (witness.length) text += " · " + t("cluster_witness") + " " + witness.join(", ");
  if (down.length) text += " · " + t("cluster_down", { nodes: down.join(", ") });
  chip.className = "chip" + (down.length || !cluster.leader ? " down" : "");
  chip.dataset.role = cluster.role;
  chip.dataset.witness = witness.join(" ");
  chip.textContent = text;
}

function start() {
  loadWords();
  setInterval(loadCluster, 5000);
  setInterval(render, 30000); // the tickets' ages move on
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    // A setup link: keep the token, take it out of the address bar.
    token = params.get("token");
    store.setItem("storeprint.token", token);
    history.replaceState(null, "", location.pathname);
  }
  if (params.has("pair")) {
    // The QR code of a pairing: the code is filled in, the device names itself.
    document.getElementById("pair-form").hidden = false;
    document.getElementById("pair-code-input").value = params.get("pair");
    history.replaceState(null, "", location.pathname);
  }
  document.getElementById("pair-form").onsubmit = pairThis;
  document.getElementById("pairing-form").onsubmit = createPairing;
  applyStatic();
  document.getElementById("lang").onclick = () => {
    lang = lang === "zh" ? "en" : "zh";
    store.setItem("storeprint.lang", lang);
    applyStatic();
    if (me) loadMe();
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
