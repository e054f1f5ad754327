// storeprint HQ dashboard: every store's gateway and printers, the tickets
// that need a person across stores (acknowledged ones marked), today's
// counts, every store A to Z a page at a time, a store's alert history and
// the full history of a ticket. It reads /v1/dashboard every 2 s; every
// cloud node answers it alike, from one answer shared by all viewers. No
// external resources.
"use strict";

const T = {
  en: {
    title: "storeprint HQ", connection: "Connection", signout: "Sign out", signin_title: "Sign in", signin: "Sign in",
    signin_help: "Enter your HQ token.", token: "HQ token", bad_token: "That token was not accepted.",
    stale: "No answer from the cloud since {time} — what you see may be out of date.",
    unreachable: "The cloud does not answer. Trying again…",
    queue_title: "Needs a person", printers_title: "Printers and screens in trouble", stores_title: "Stores", search_title: "Find a ticket",
    s_online: "Stores online", s_trouble: "Stores in trouble", s_printers: "Printers and screens in trouble", s_alerts: "Tickets need a person",
    col_store: "Store", col_gateway: "Gateway", col_printers: "Printers", col_alerts: "Needs a person", col_printed: "Printed today",
    col_failed: "Failed", col_flagged: "Flagged", col_duplicates: "Duplicates prevented", col_median: "Median time to paper",
    stores_note: "Showing {shown} of {total} stores, those in trouble first.",
    no_queue: "Nothing needs a person.", no_printers: "Every printer and screen is fine.", no_stores: "No stores yet.",
    online: "Online", offline: "Offline", never: "never seen", seen: "seen {ago}",
    ago_s: "{n} s ago", ago_m: "{n} min ago", ago_h: "{n} h ago", ago_d: "{n} d ago",
    details: "Details", waited: "flagged {ago}", accepted_ago: "accepted {ago}",
    ready: "Ready", paper_end: "Out of paper", cover_open: "Cover open", unknown: "Unknown",
    failover: "stations on {backup}", stations: "Stations", reported: "reported {ago}", stale_state: "store offline: last known state",
    retry: "Make-up print", history: "History", sent: "Sent to the store — waiting for the printer",
    q_retry: "Make-up print of {task} at {store}?", t_retry: "The store prints the ticket again, once. Only if it is not on paper.",
    operator: "Your name", reason: "Reason", cancel: "Cancel", confirm: "Confirm",
    search: "Search", search_placeholder: "Order id or task number", no_results: "No ticket {q} in your stores.",
    h_store: "Store", h_order: "Order", h_station: "Station", h_printer: "Printer", h_source: "Source", h_created: "Accepted",
    h_printed: "On paper", h_to_paper: "Time to paper", h_attempts: "Attempts", h_events: "Events from the store", h_audit: "Actions",
    h_error: "Last error", h_copy_of: "Copy of", h_backup_from: "Backup for",
    attempt: "Attempt {n}", no_attempts: "Not sent to a printer yet.", no_events: "No events yet.", no_audit: "No actions.",
    ev_task: "{status} (version {version}, attempt {attempt})", ev_receipt: "attempt {attempt}: {state} on {printer}",
    ev_audit: "{action} by {operator}", by: "by {who}",
    prepared: "prepared", submitted: "sent", printed: "printed", confirmed: "confirmed by the cloud",
    pending_delivery: "waiting for the store", queued: "queued", printing: "printing", retry_wait: "waiting to retry",
    done: "done", failed: "failed", attention_required: "needs a person", cancelled: "cancelled",
    link_title: "Store links", no_link: "Nothing happened on the stores' links this week.",
    l_gateway_reset: "Gateway data reset", l_resynchronised: "Store resynchronised",
    l_gateway_behind: "Gateway restored from an older copy", l_take_over: "Tickets taken over by a new gateway",
    l_dead_letter: "Events set aside",
    ld_gateway_reset: "The gateway came back with new data; what it reports from now on counts.",
    ld_resynchronised: "The cloud had lost part of the store's history; the store sent all {n} tickets it holds.",
    ld_gateway_behind: "The store's data was older than the cloud's; it learned {n} tickets from the cloud before printing.",
    ld_take_over: "{n} tickets of the replaced gateway now belong to {gateway}.",
    ld_dead_letter: "{n} events from the store could not be applied; the link went on past them.",
    s_acked: "Taken on by a person", col_acked: "Acknowledged", ack: "Acknowledge",
    acked_by: "Acknowledged by {who}, {ago}", q_ack: "Acknowledge {task} at {store}?",
    t_ack: "You take this ticket on: it stays on the list, marked with your name, until it is done or a day has passed.",
    all_stores: "All stores, A to Z", directory_title: "All stores, A to Z", directory_note: "Stores {from} to {to}",
    first_page: "First page", next_page: "Next page", close: "Close",
    alert_history: "Alerts of {store}", no_alerts: "No alerts.", alerts: "Alerts",
    bump_times: "Time to bump at {store}", bump_button: "Time to bump", bump_help: "Time from the order to the cook's bump on a kitchen screen, for today's orders.",
    no_bumps: "No ticket bumped on a kitchen screen today.", b_station: "Station", b_hour: "Hour", b_count: "Tickets", b_median: "Median", b_p90: "90% within", b_day: "Today",
    st_open: "needs a person", st_acknowledged: "acknowledged", st_resolved: "resolved", st_expired: "expired",
    raised: "raised {time}", resolved_at: "resolved {time}", acked_at: "acknowledged by {who} {time}",
    screen_on: "Screen on", screen_offline: "Screen offline", screen_counts: "{open} open · {shown} shown",
    screen_stale: "{n} waiting too long", screen: "screen {id}",
    role_leader: "leader", role_follower: "follower", role_candidate: "candidate", role_witness: "witness",
    node_up: "up", node_down: "down", node_unknown: "no word", a_cluster_node_down: "A node of the store's cluster is down or cut off",
  },
  zh: {
    title: "storeprint 总部", connection: "连接", signout: "退出", signin_title: "登录", signin: "登录",
    signin_help: "请输入总部令牌。", token: "总部令牌", bad_token: "令牌无效。",
    stale: "自 {time} 起云端无响应，页面内容可能已过时。",
    unreachable: "云端无响应，正在重试…",
    queue_title: "需要处理", printers_title: "故障打印机与屏幕", stores_title: "门店", search_title: "查找小票",
    s_online: "在线门店", s_trouble: "异常门店", s_printers: "故障打印机与屏幕", s_alerts: "待处理小票",
    col_store: "门店", col_gateway: "网关", col_printers: "打印机", col_alerts: "待处理", col_printed: "今日已打印",
    col_failed: "失败", col_flagged: "待确认", col_duplicates: "已拦截重复", col_median: "出票中位时长",
    stores_note: "显示 {shown} / {total} 家门店，异常门店在前。",
    no_queue: "暂无需要处理的小票。", no_printers: "所有打印机和屏幕正常。", no_stores: "暂无门店。",
    online: "在线", offline: "离线", never: "从未连接", seen: "{ago}在线",
    ago_s: "{n} 秒前", ago_m: "{n} 分钟前", ago_h: "{n} 小时前", ago_d: "{n} 天前",
    details: "详情", waited: "{ago}标记", accepted_ago: "{ago}接单",
    ready: "就绪", paper_end: "缺纸", cover_open: "纸仓盖打开", unknown: "未知",
    failover: "档口已转到 {backup}", stations: "档口", reported: "{ago}上报", stale_state: "门店离线：最后已知状态",
    retry: "补打", history: "历史", sent: "已发送到门店，等待打印",
    q_retry: "补打 {store} 的 {task}？", t_retry: "门店将重新打印这张小票一次。仅在确认没有出票时补打。",
    operator: "您的姓名", reason: "原因", cancel: "取消", confirm: "确认",
    search: "查找", search_placeholder: "订单号或任务号", no_results: "您的门店中没有小票 {q}。",
    h_store: "门店", h_order: "订单", h_station: "档口", h_printer: "打印机", h_source: "来源", h_created: "接单",
    h_printed: "出票", h_to_paper: "出票时长", h_attempts: "打印尝试", h_events: "门店事件", h_audit: "操作记录",
    h_error: "最近错误", h_copy_of: "复制自", h_backup_from: "代打",
    attempt: "第 {n} 次", no_attempts: "尚未发送到打印机。", no_events: "暂无事件。", no_audit: "暂无操作。",
    ev_task: "{status}（版本 {version}，第 {attempt} 次）", ev_receipt: "第 {attempt} 次：{printer} {state}",
    ev_audit: "{operator}：{action}", by: "操作人 {who}",
    prepared: "已准备", submitted: "已发送", printed: "已打印", confirmed: "云端已确认",
    pending_delivery: "等待门店接收", queued: "排队中", printing: "打印中", retry_wait: "等待重试",
    done: "完成", failed: "失败", attention_required: "需要处理", cancelled: "已取消",
    link_title: "门店同步链路", no_link: "本周各门店同步链路无异常。",
    l_gateway_reset: "网关数据已重置", l_resynchronised: "门店已重新同步",
    l_gateway_behind: "网关从旧备份恢复", l_take_over: "新网关接管小票", l_dead_letter: "事件已搁置",
    ld_gateway_reset: "网关以新数据重新连接，此后以其上报为准。",
    ld_resynchronised: "云端丢失了部分门店记录，门店已重新上报全部 {n} 张小票。",
    ld_gateway_behind: "门店数据比云端旧，打印前已从云端获取 {n} 张小票的最新状态。",
    ld_take_over: "被替换网关的 {n} 张小票现归 {gateway}。",
    ld_dead_letter: "门店的 {n} 个事件无法应用，同步已跳过继续。",
    s_acked: "已有人处理", col_acked: "已认领", ack: "认领",
    acked_by: "{who} 已认领，{ago}", q_ack: "认领 {store} 的 {task}？",
    t_ack: "由您负责这张小票：它会带着您的名字留在列表中，直到完成或满一天。",
    all_stores: "全部门店（按编号）", directory_title: "全部门店（按编号）", directory_note: "门店 {from} 至 {to}",
    first_page: "第一页", next_page: "下一页", close: "关闭",
    alert_history: "{store} 的提醒记录", no_alerts: "暂无提醒。", alerts: "提醒记录",
    bump_times: "{store} 出餐用时", bump_button: "出餐用时", bump_help: "从下单到厨师在厨房屏幕上划单的用时（今日订单）。",
    no_bumps: "今日厨房屏幕上尚无划单。", b_station: "档口", b_hour: "时段", b_count: "单数", b_median: "中位数", b_p90: "90% 以内", b_day: "今日",
    st_open: "待处理", st_acknowledged: "已认领", st_resolved: "已解决", st_expired: "已过期",
    raised: "{time} 发出", resolved_at: "{time} 解决", acked_at: "{who} {time} 认领",
    screen_on: "屏幕在线", screen_offline: "屏幕离线", screen_counts: "未划单 {open} · 已显示 {shown}",
    screen_stale: "{n} 张等待过久", screen: "屏幕 {id}",
    role_leader: "主节点", role_follower: "从节点", role_candidate: "选举中", role_witness: "见证节点",
    node_up: "在线", node_down: "离线", node_unknown: "无消息", a_cluster_node_down: "门店集群有节点离线或被隔断",
  },
};

const POLL_MS = 2000;
const store = window.localStorage;
const TOKEN_KEY = "storeprint.hq.token";
let words = {}; // the catalogue (GET /v1/words)
let lang = store.getItem("storeprint.lang") || ((navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en");
let token = store.getItem(TOKEN_KEY) || "";
let dash = null;
let lastOK = null;
let timer = null;
let generation = 0;
let results = null; // the last search: {q, tasks}
const sent = new Set(); // alert ids whose make-up print was sent
// The A-to-Z list of stores, a page of /v1/stores at a time: the cursors
// of the pages seen, the next page's, and the page shown.
let directory = null; // {afters: [...], next: "" | null, stores: [...]}
let alertHistory = null; // {store, alerts}
let bumpTimes = null; // {store, times}: a store's time to bump (GET /v1/stores/{id}/bump-times)

function t(key, vars) {
  let s = (T[lang] && T[lang][key]) || T.en[key] || key;
  for (const k in vars || {}) s = s.split("{" + k + "}").join(vars[k]);
  return s;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "onclick") e.addEventListener("click", v);
    else if (k.startsWith("data-") || k === "type" || k === "title" || k === "role" || k === "colspan") e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function locale() { return lang === "zh" ? "zh-CN" : "en-GB"; }

function clock(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  const today = new Date();
  const opts = { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false };
  if (d.toDateString() !== today.toDateString()) Object.assign(opts, { month: "short", day: "numeric" });
  return d.toLocaleString(locale(), opts);
}

// ago says how long before the server's clock something happened, so a
// wrong clock in the browser changes nothing.
function ago(iso) {
  if (!iso || !dash) return "";
  const s = Math.max(0, Math.round((new Date(dash.at) - new Date(iso)) / 1000));
  if (s < 90) return t("ago_s", { n: s });
  if (s < 5400) return t("ago_m", { n: Math.round(s / 60) });
  if (s < 172800) return t("ago_h", { n: Math.round(s / 3600) });
  return t("ago_d", { n: Math.round(s / 86400) });
}

function duration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return ms + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  return (ms / 60000).toFixed(1) + " min";
}

function applyStatic() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.title = t("title");
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
  generation++;
  clearTimeout(timer);
  store.removeItem(TOKEN_KEY);
  dash = null;
  results = null;
  directory = null;
  alertHistory = null;
  sent.clear();
  document.getElementById("results").replaceChildren();
  document.getElementById("directory").hidden = true;
  document.getElementById("alert-history").hidden = true;
  show(false);
  document.getElementById("signin-error").textContent = message || "";
  document.getElementById("token").focus();
}

async function api(method, path, body) {
  const resp = await fetch(path, {
    method, cache: "no-store",
    headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await resp.json().catch(() => ({}));
  if (resp.status === 401 || resp.status === 403) {
    const msg = resp.status === 401 ? t("bad_token") : (data.error || t("bad_token"));
    signOut(msg);
    throw new Error(msg);
  }
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  return data;
}

// page reads a page of a paged list: its items and the cursor of the next
// page (from the Link header), or null on the last page.
async function page(path) {
  const resp = await fetch(path, { cache: "no-store", headers: { "Authorization": "Bearer " + token } });
  const data = await resp.json().catch(() => ({}));
  if (resp.status === 401 || resp.status === 403) {
    signOut(t("bad_token"));
    throw new Error(t("bad_token"));
  }
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  const m = /<[^>]*[?&]after=([^&>]*)[^>]*>;\s*rel="next"/.exec(resp.headers.get("Link") || "");
  return { items: data, next: m ? decodeURIComponent(m[1]) : null };
}

// since is the start of today in the browser's time zone.
function since() {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return d.toISOString();
}

// poll reads the dashboard every POLL_MS, one request at a time.
async function poll() {
  const gen = generation;
  const live = document.getElementById("live");
  try {
    const d = await api("GET", "/v1/dashboard?since=" + encodeURIComponent(since()));
    if (gen !== generation) return;
    dash = d;
    lastOK = new Date();
    live.className = "dot live";
    show(true);
    render();
    if (directory) await loadDirectory(directory.afters[directory.afters.length - 1], false);
  } catch (e) {
    if (gen !== generation || !token) return;
    live.className = "dot down";
    show(true);
    renderStale();
  }
  timer = setTimeout(poll, POLL_MS);
}

async function loadWords() {
  try {
    const resp = await fetch("/v1/words");
    if (resp.ok) words = await resp.json();
  } catch (e) {
    // The page still says the states in its own words.
  }
  render();
}

function start() {
  if (Object.keys(words).length === 0) loadWords();
  generation++;
  clearTimeout(timer);
  poll();
}

function renderStale() {
  const banner = document.getElementById("stale");
  const old = !lastOK || (new Date() - lastOK) > 3 * POLL_MS;
  banner.hidden = !old || !token;
  if (old) banner.textContent = lastOK ? t("stale", { time: clock(lastOK.toISOString()) }) : t("unreachable");
}

function printerState(p) {
  if (p.word || p.stale > 0) return "bad";
  if (p.status === "ready" && !p.failover) return "ok";
  if (p.status === "unknown" && !p.failover) return "unknown";
  return "bad";
}

// say returns a word of the catalogue (GET /v1/words) in the page's
// language: the words a store's LAN page uses too.
function say(word) {
  const w = words[word] || {};
  return w[lang] || w.en || "";
}

function printerWords(p) {
  if (p.kind === "display") return screenWords(p);
  const state = say(p.word || "printer." + p.status) || t(p.status);
  return state + (p.failover ? " · " + t("failover", { backup: p.backup || "?" }) : "");
}

// screenWords says a kitchen display's state in its own words: on or
// offline (a silent screen is no unreachable printer), its tickets not
// bumped, those waiting too long, and where its stations print.
function screenWords(p) {
  return [t(p.status === "ready" ? "screen_on" : "screen_offline"),
    t("screen_counts", { open: p.open || 0, shown: p.shown || 0 }),
    p.stale > 0 && t("screen_stale", { n: p.stale }),
    p.failover && t("failover", { backup: p.backup || "?" })].filter(Boolean).join(" · ");
}

// targetName names what an alert is about: a printer by its id, a kitchen
// display as a screen.
function targetName(id, kind) {
  return kind === "display" ? t("screen", { id }) : id;
}

// details is the technical side of something, folded away.
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

function reasonWords(a) {
  if (a.kind === "dead_letter") return say("alert.dead_letter");
  if (a.kind === "command_refused") return say("alert.command_refused");
  if (a.kind === "gateway_credential_shared") return say("alert.gateway_credential_shared");
  if (a.kind === "cluster_node_down") return t("a_cluster_node_down");
  if (a.task_status === "failed" || a.kind === "failed") return say("task." + (a.reason || "retries"));
  return say("task." + (a.reason || "uncertain"));
}

function render() {
  renderStale();
  if (!dash) return;
  const s = dash.summary;
  const tile = (key, n, of, cls) => el("div", { class: "tile " + cls, "data-summary": key },
    el("div", { class: "n" }, of === undefined ? n : n + " / " + of), el("div", {}, t(key)));
  const bad = (b) => b ? "bad" : "ok";
  document.getElementById("summary").replaceChildren(
    tile("s_online", s.online, s.stores, bad(s.online < s.stores)),
    tile("s_trouble", s.stores_in_trouble, undefined, bad(s.stores_in_trouble > 0)),
    tile("s_printers", s.printers_in_trouble, undefined, bad(s.printers_in_trouble > 0)),
    tile("s_alerts", s.open_alerts + (s.open_alerts_more ? "+" : ""), undefined, bad(s.open_alerts > 0)),
    tile("s_acked", s.acknowledged_alerts + (s.acknowledged_alerts_more ? "+" : ""), undefined, s.acknowledged_alerts > 0 ? "warn" : "ok"));

  const queue = document.getElementById("queue");
  queue.replaceChildren();
  if (dash.queue.length === 0) queue.append(el("p", { class: "muted" }, t("no_queue")));
  for (const a of dash.queue) {
    const canRetry = a.task_status === "failed" || a.task_status === "attention_required";
    const wasSent = sent.has(a.store_id + "/" + a.alert_id);
    const acked = a.state === "acknowledged";
    queue.append(el("div", { class: "card " + (acked ? "warn" : "bad"), "data-store": a.store_id, "data-task": a.task_no,
      "data-status": a.task_status || a.kind, "data-state": a.state },
      el("h3", {}, a.store_name + " · " + (a.station || "") + (a.order_id ? " · " + a.order_id : "")),
      el("div", { class: "state " + (acked ? "warn" : "bad") }, reasonWords(a)),
      (a.kind === "command_refused" || a.kind === "gateway_credential_shared" || a.kind === "cluster_node_down") && el("div", {}, a.message),
      el("div", { class: "muted" }, a.accepted_at && el("span", { class: "accepted" }, t("accepted_ago", { ago: ago(a.accepted_at) }) + " · "),
        el("span", { class: "age" }, t("waited", { ago: ago(a.raised_at) })),
        (a.printer_id ? " · " + targetName(a.printer_id, a.printer_kind) : "") + (a.task_no ? " · " + a.task_no : "")),
      details(a.store_id + "/" + a.alert_id, a.kind === "dead_letter" ? a.message : a.last_error),
      acked && el("div", { class: "state warn" }, t("acked_by", { who: a.acknowledged_by, ago: ago(a.acknowledged_at) })),
      wasSent && el("div", { class: "state warn" }, t("sent")),
      el("div", { class: "row" },
        canRetry && el("button", { class: "big", type: "button", "data-action": "retry", disabled: wasSent,
          onclick: () => makeUp(a) }, t("retry")),
        !acked && el("button", { class: "big secondary", type: "button", "data-action": "ack",
          onclick: () => acknowledge(a) }, t("ack")),
        a.task_no && el("button", { class: "big secondary", type: "button", "data-action": "history",
          onclick: () => search(a.task_no, a.store_id, true) }, t("history")))));
  }

  const link = document.getElementById("link");
  link.replaceChildren();
  if (dash.link_events.length === 0) link.append(el("p", { class: "muted" }, t("no_link")));
  for (const e of dash.link_events) {
    link.append(el("div", { class: "card warn", "data-store": e.store_id, "data-link": e.kind, title: e.message },
      el("h3", {}, e.store_name || e.store_id),
      el("div", { class: "state warn" }, t("l_" + e.kind)),
      el("div", {}, t("ld_" + e.kind, { n: e.count, gateway: e.gateway_id })),
      el("div", { class: "muted" }, clock(e.at) + " · " + ago(e.at))));
  }

  const printers = document.getElementById("printers");
  printers.replaceChildren();
  if (dash.printers_in_trouble.length === 0) printers.append(el("p", { class: "muted" }, t("no_printers")));
  for (const p of dash.printers_in_trouble) {
    printers.append(el("div", { class: "card bad", "data-store": p.store_id, "data-printer": p.printer_id, "data-status": p.status,
      "data-kind": p.kind || "printer" },
      el("h3", {}, p.store_name + " · " + targetName(p.printer_id, p.kind)),
      el("div", { class: "state bad" }, printerWords(p)),
      p.stations.length > 0 && el("div", { class: "muted" }, t("stations") + ": " + p.stations.join(", ")),
      el("div", { class: "muted" }, p.store_online ? t("reported", { ago: ago(p.updated_at) }) : t("stale_state"))));
  }

  const tbody = document.querySelector("#stores tbody");
  tbody.replaceChildren();
  document.getElementById("stores-note").textContent =
    dash.stores.length < s.stores ? t("stores_note", { shown: dash.stores.length, total: s.stores }) : "";
  if (dash.stores.length === 0) tbody.append(el("tr", {}, el("td", { colspan: "9", class: "muted" }, t("no_stores"))));
  const tenants = new Set(dash.stores.map(st => st.tenant_id));
  for (const st of dash.stores) {
    const d = st.today;
    tbody.append(el("tr", { class: st.trouble ? "trouble" : "", "data-store-row": st.store_id, "data-online": String(st.online) },
      el("td", {}, el("strong", {}, st.name), el("div", { class: "muted" }, st.store_id + (tenants.size > 1 ? " · " + st.tenant_id : ""))),
      el("td", { class: st.online ? "" : "bad" }, el("span", { class: "dot " + (st.online ? "live" : "down") }), " ",
        st.online ? t("online") : t("offline"),
        lastSeen(st), clusterChips(st)),
      el("td", {}, st.printers.map(p => el("span", { class: "chip " + printerState(p), "data-store": st.store_id,
        "data-printer": p.printer_id, "data-status": p.status, "data-kind": p.kind || "printer" }, p.printer_id + " · " + printerWords(p)))),
      el("td", { class: "num" + (st.open_alerts > 0 ? " bad" : "") }, alertsButton(st)),
      el("td", { class: "num", "data-count": "printed" }, d.printed),
      el("td", { class: "num" + (d.failed > 0 ? " bad" : ""), "data-count": "failed" }, d.failed),
      el("td", { class: "num" + (d.flagged > 0 ? " bad" : ""), "data-count": "flagged" }, d.flagged),
      el("td", { class: "num", "data-count": "duplicates_prevented" }, d.duplicates_prevented),
      el("td", { class: "num", "data-count": "median_to_paper" }, duration(d.median_to_paper_ms),
        el("div", {}, el("button", { class: "small secondary", type: "button", "data-action": "bump-times", "data-bump-times": st.store_id,
          onclick: () => openBumpTimes(st) }, t("bump_button"))))));
  }
  labelCells(document.getElementById("stores"));
  renderDirectory();
  renderAlertHistory();
  renderBumpTimes();
}

// labelCells gives every cell its column's name, which a phone shows in
// front of it once the table is a list of cards.
function labelCells(table) {
  const heads = [...table.querySelectorAll("thead th")].map(th => th.textContent);
  for (const tr of table.querySelectorAll("tbody tr")) {
    [...tr.children].forEach((td, i) => { if (heads[i] && !td.hasAttribute("colspan")) td.dataset.label = heads[i]; });
  }
}

function storeRow(st) {
  return [
    el("td", {}, el("strong", {}, st.name), el("div", { class: "muted" }, st.store_id + " · " + st.tenant_id)),
    el("td", { class: st.online ? "" : "bad" }, el("span", { class: "dot " + (st.online ? "live" : "down") }), " ",
      st.online ? t("online") : t("offline"),
      lastSeen(st), clusterChips(st)),
    el("td", {}, st.printers.map(p => el("span", { class: "chip " + printerState(p), "data-store": st.store_id,
      "data-printer": p.printer_id, "data-status": p.status, "data-kind": p.kind || "printer" }, p.printer_id + " · " + printerWords(p)))),
  ];
}

// lastSeen says when an offline store's gateway was last heard from (an
// online one's is written every 30 s, so it says little).
function lastSeen(st) {
  if (st.online) return null;
  return el("div", { class: "muted" }, st.last_seen ? t("seen", { ago: ago(st.last_seen) }) : t("never"));
}

// clusterChips shows a store's cluster as its leading gateway last
// reported it: each node with its role (the witness named as such) and
// state, red when down. A gateway that does not report members' roles
// has its leader and the others followers.
function clusterChips(st) {
  const g = (st.gateways || []).find(g => g.cluster && !g.revoked_at);
  if (!g) return null;
  const c = g.cluster;
  return el("div", { class: "cluster", "data-cluster": st.store_id }, c.members.map(m => {
    const role = m.role || (m.node_id === c.node_id ? c.role : m.node_id === c.leader ? "leader" : "follower");
    const cls = m.state === "up" ? "ok" : m.state === "down" ? "bad" : "unknown";
    return el("span", { class: "chip " + cls, "data-node": m.node_id, "data-role": role, "data-state": m.state },
      m.node_id + " · " + t("role_" + role) + " · " + t("node_" + m.state));
  }));
}

// alertsButton shows a store's current alerts and opens its alert history.
function alertsButton(st) {
  const n = st.open_alerts + (st.acknowledged_alerts > 0 ? " + " + st.acknowledged_alerts + " ✓" : "");
  return el("button", { class: "small secondary", type: "button", "data-action": "alerts", "data-alerts": st.store_id,
    title: t("alerts"), onclick: () => openAlertHistory(st) }, n);
}

// The A-to-Z list: a page of GET /v1/stores at a time.
async function loadDirectory(after, push) {
  const gen = generation;
  try {
    const p = await page("/v1/stores?limit=100" + (after ? "&after=" + encodeURIComponent(after) : ""));
    if (gen !== generation) return;
    if (!directory) directory = { afters: [""] };
    if (push) directory.afters.push(after);
    directory.stores = p.items;
    directory.next = p.next;
    renderDirectory();
  } catch (e) {
    document.getElementById("directory-note").textContent = e.message;
  }
}

function renderDirectory() {
  const sec = document.getElementById("directory");
  sec.hidden = !directory;
  if (!directory || !directory.stores) return;
  const rows = directory.stores;
  document.getElementById("directory-note").textContent = rows.length === 0 ? t("no_stores") :
    t("directory_note", { from: rows[0].store_id, to: rows[rows.length - 1].store_id });
  document.querySelector("#directory-table tbody").replaceChildren(...rows.map(st =>
    el("tr", { "data-directory-row": st.store_id, "data-online": String(st.online) }, storeRow(st),
      el("td", { class: "num" + (st.open_alerts > 0 ? " bad" : "") }, alertsButton(st)),
      el("td", { class: "num" }, st.acknowledged_alerts))));
  labelCells(document.getElementById("directory-table"));
  document.getElementById("directory-next").disabled = directory.next === null;
  document.getElementById("directory-first").disabled = directory.afters.length <= 1;
}

// A store's alerts, newest first, each with what became of it.
async function openAlertHistory(st) {
  try {
    const alerts = await api("GET", "/v1/stores/" + encodeURIComponent(st.store_id) + "/alerts?history=true&limit=50");
    alertHistory = { store: st, alerts };
    renderAlertHistory();
    document.getElementById("alert-history").scrollIntoView({ block: "start" });
  } catch (e) {
    document.getElementById("search-error").textContent = e.message;
  }
}

function renderAlertHistory() {
  const sec = document.getElementById("alert-history");
  sec.hidden = !alertHistory;
  if (!alertHistory) return;
  const h = alertHistory;
  document.getElementById("alert-history-title").textContent = t("alert_history", { store: h.store.name });
  const list = document.getElementById("alert-history-list");
  if (h.alerts.length === 0) {
    list.replaceChildren(el("p", { class: "muted" }, t("no_alerts")));
    return;
  }
  const cls = { open: "bad", acknowledged: "warn", resolved: "ok", expired: "" };
  list.replaceChildren(el("ol", { class: "timeline", "data-list": "alerts" }, h.alerts.map(a =>
    el("li", { "data-alert": a.alert_id, "data-state": a.state },
      el("span", { class: "badge " + (cls[a.state] || "") }, t("st_" + a.state)), " ",
      t(a.kind) + " · " + (a.task_no || a.printer_id || "") + " · " + t("raised", { time: clock(a.raised_at) }),
      a.acknowledged_at ? " · " + t("acked_at", { who: a.acknowledged_by, time: clock(a.acknowledged_at) }) : "",
      a.resolved_at ? " · " + t("resolved_at", { time: clock(a.resolved_at) }) : ""))));
}

// A store's time from order to bump per station, today and by hour.
async function openBumpTimes(st) {
  try {
    const times = await api("GET", "/v1/stores/" + encodeURIComponent(st.store_id) + "/bump-times?since=" + encodeURIComponent(since()));
    bumpTimes = { store: st, times };
    renderBumpTimes();
    document.getElementById("bump-times").scrollIntoView({ block: "start" });
  } catch (e) {
    document.getElementById("search-error").textContent = e.message;
  }
}

function renderBumpTimes() {
  const sec = document.getElementById("bump-times");
  sec.hidden = !bumpTimes;
  if (!bumpTimes) return;
  document.getElementById("bump-times-title").textContent = t("bump_times", { store: bumpTimes.store.name });
  const list = document.getElementById("bump-times-list");
  const stations = bumpTimes.times.stations;
  if (stations.length === 0) {
    list.replaceChildren(el("p", { class: "muted" }, t("no_bumps")));
    return;
  }
  const secs = s => duration(s * 1000);
  const hour = h => new Date(h).toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit" });
  const row = (station, when, b, cls) => el("tr", { class: cls || "", "data-bump-station": station, "data-bump-hour": when },
    el("td", {}, station), el("td", {}, when), el("td", { class: "num" }, b.count),
    el("td", { class: "num", "data-median-s": b.median_s }, secs(b.median_s)), el("td", { class: "num", "data-p90-s": b.p90_s }, secs(b.p90_s)));
  list.replaceChildren(el("table", { "data-list": "bump-times" },
    el("thead", {}, el("tr", {}, ["b_station", "b_hour", "b_count", "b_median", "b_p90"].map(k => el("th", {}, t(k))))),
    el("tbody", {}, stations.flatMap(s => [row(s.station, t("b_day"), s, "total")].concat(s.hours.map(h => row(s.station, hour(h.hour), h)))))));
}

// ask asks who and why in the dialog, then runs send(operator, reason);
// the dialog stays open with the error if send fails.
function ask(title, text, defaultReason, send) {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-error").textContent = "";
  const op = document.getElementById("operator");
  op.value = store.getItem("storeprint.operator") || "";
  document.getElementById("reason").value = "";
  const form = document.getElementById("confirm-form");
  const ok = document.getElementById("confirm-ok");
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const operator = op.value.trim();
    if (!operator) { op.focus(); return; }
    store.setItem("storeprint.operator", operator);
    const reason = document.getElementById("reason").value.trim() || defaultReason;
    ok.disabled = true;
    try {
      await send(operator, reason);
      dlg.close();
      render();
    } catch (e) {
      document.getElementById("confirm-error").textContent = e.message;
    } finally {
      ok.disabled = false;
    }
  };
  document.getElementById("confirm-cancel").onclick = () => dlg.close();
  dlg.showModal();
  (op.value ? ok : op).focus();
}

// makeUp queues the audited make-up print; the store's gateway prints the
// ticket again, once.
function makeUp(a) {
  const vars = { task: a.task_no, store: a.store_name };
  // One command id per dialog: sending again after an error cannot queue
  // a second print.
  const commandID = "hq-" + Array.from(crypto.getRandomValues(new Uint8Array(12)), b => b.toString(16).padStart(2, "0")).join("");
  ask(t("q_retry", vars), t("t_retry"), t("q_retry", vars), async (operator, reason) => {
    await api("POST", "/v1/stores/" + encodeURIComponent(a.store_id) + "/tasks/" + encodeURIComponent(a.task_no) + "/retry",
      { operator, reason, command_id: commandID });
    sent.add(a.store_id + "/" + a.alert_id);
  });
}

// acknowledge records, audited, that this person takes the alert on; the
// next read of the dashboard shows it acknowledged.
function acknowledge(a) {
  const vars = { task: a.task_no, store: a.store_name };
  ask(t("q_ack", vars), t("t_ack"), "", async (operator, reason) => {
    const got = await api("POST", "/v1/stores/" + encodeURIComponent(a.store_id) + "/alerts/" + encodeURIComponent(a.alert_id) + "/ack",
      { operator, reason });
    Object.assign(a, { state: got.state, acknowledged_at: got.acknowledged_at, acknowledged_by: got.acknowledged_by });
  });
}

async function search(q, storeID, scroll) {
  q = (q || "").trim();
  if (!q) return;
  document.getElementById("q").value = q;
  document.getElementById("search-error").textContent = "";
  history.replaceState(null, "", location.pathname + "#q=" + encodeURIComponent(q));
  try {
    let path = "/v1/search?q=" + encodeURIComponent(q);
    if (storeID) path += "&store_id=" + encodeURIComponent(storeID);
    results = await api("GET", path);
    renderResults();
    if (scroll) document.getElementById("results").scrollIntoView({ block: "start" });
  } catch (e) {
    document.getElementById("search-error").textContent = e.message;
  }
}

function statusBadge(status) {
  const cls = status === "done" ? "ok" : (status === "failed" || status === "attention_required") ? "bad" : "";
  return el("span", { class: "badge " + cls, "data-status": status }, t(status));
}

function eventWords(e) {
  const d = e.data || {};
  if (e.kind === "task") return t("ev_task", { status: t(d.status), version: d.version, attempt: d.attempt }) + (d.last_error ? " — " + d.last_error : "");
  if (e.kind === "receipt") return t("ev_receipt", { attempt: d.attempt, state: t(d.state), printer: d.printer_id });
  if (e.kind === "audit") return t("ev_audit", { action: d.action, operator: d.operator || "?" }) + (d.reason ? " — " + d.reason : "");
  return e.kind;
}

function renderResults() {
  const out = document.getElementById("results");
  out.replaceChildren();
  if (!results) return;
  if (results.tasks.length === 0) {
    out.append(el("p", { class: "muted", "data-results": "none" }, t("no_results", { q: results.q })));
    return;
  }
  for (const h of results.tasks) {
    const attempts = new Map();
    for (const r of h.receipts) {
      if (!attempts.has(r.attempt)) attempts.set(r.attempt, []);
      attempts.get(r.attempt).push(r);
    }
    const toPaper = h.printed_at ? new Date(h.printed_at) - new Date(h.created_at) : null;
    const row = (k, v) => v ? [el("dt", {}, t(k)), el("dd", {}, v)] : [];
    out.append(el("article", { class: "card history", "data-history": h.task_no, "data-store": h.store_id },
      el("h3", {}, h.task_no, " ", statusBadge(h.status)),
      el("dl", {},
        row("h_store", h.store_name + " (" + h.store_id + ")"),
        row("h_order", h.order_id), row("h_station", h.station), row("h_printer", h.printer_id),
        row("h_source", h.source), row("h_copy_of", h.copy_of), row("h_backup_from", h.backup_from),
        row("h_created", clock(h.created_at)), row("h_printed", h.printed_at && clock(h.printed_at)),
        row("h_to_paper", toPaper !== null && duration(toPaper)), row("h_error", h.last_error)),
      el("h4", {}, t("h_attempts")),
      attempts.size === 0 ? el("p", { class: "muted" }, t("no_attempts")) :
        el("ol", { class: "timeline", "data-list": "attempts" }, [...attempts].map(([n, rs]) => el("li", { "data-attempt": n },
          el("strong", {}, t("attempt", { n })), " · " + (rs[0].printer_id || "") + " · ",
          rs.map(r => t(r.state) + " " + clock(r.at)).join(" → ")))),
      el("h4", {}, t("h_events")),
      h.events.length === 0 ? el("p", { class: "muted" }, t("no_events")) :
        el("ol", { class: "timeline", "data-list": "events" }, h.events.map(e => el("li", { "data-kind": e.kind },
          clock(e.at) + " · " + eventWords(e)))),
      el("h4", {}, t("h_audit")),
      h.audit.length === 0 ? el("p", { class: "muted" }, t("no_audit")) :
        el("ol", { class: "timeline", "data-list": "audit" }, h.audit.map(a => el("li", { "data-action": a.action },
          clock(a.at) + " · " + a.action + " · " + t("by", { who: (a.operator ? a.operator + " (" + a.actor + ")" : a.actor) }) +
          (a.reason ? " — " + a.reason : ""))))));
  }
}

function init() {
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    // A setup link: keep the token, take it out of the address bar.
    token = params.get("token");
    store.setItem(TOKEN_KEY, token);
    history.replaceState(null, "", location.pathname + location.hash);
  }
  applyStatic();
  document.getElementById("lang").onclick = () => {
    lang = lang === "zh" ? "en" : "zh";
    store.setItem("storeprint.lang", lang);
    applyStatic();
    render();
    renderResults();
  };
  document.getElementById("signout").onclick = () => signOut("");
  document.getElementById("all-stores").onclick = () => {
    directory = { afters: [""] };
    loadDirectory("", false);
  };
  document.getElementById("directory-next").onclick = () => {
    if (directory && directory.next !== null) loadDirectory(directory.next, true);
  };
  document.getElementById("directory-first").onclick = () => {
    directory = { afters: [""] };
    loadDirectory("", false);
  };
  document.getElementById("directory-close").onclick = () => { directory = null; renderDirectory(); };
  document.getElementById("alert-history-close").onclick = () => { alertHistory = null; renderAlertHistory(); };
  document.getElementById("bump-times-close").onclick = () => { bumpTimes = null; renderBumpTimes(); };
  document.getElementById("signin-form").onsubmit = (ev) => {
    ev.preventDefault();
    const input = document.getElementById("token");
    token = input.value.trim();
    input.value = "";
    if (!token) return;
    store.setItem(TOKEN_KEY, token);
    document.getElementById("signin-error").textContent = "";
    start();
  };
  document.getElementById("search-form").onsubmit = (ev) => {
    ev.preventDefault();
    search(document.getElementById("q").value, "", true);
  };
  if (!token) { show(false); return; }
  start();
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("q")) search(hash.get("q"));
}

init();
