// storeprint kitchen screen: the station's open tickets, oldest first,
// bumped by touch or the bump bar's keys. Every asset comes from the
// gateway: it works with the internet down.
"use strict";

const T = {
  en: {
    recall: "Recall (R)", signin_title: "Sign in this screen", signin: "Sign in",
    signin_help: "Enter a staff token, or the pairing code shown on the LAN page.",
    token: "Staff token", pair_code: "Pairing code (6 digits)", bad_token: "That token was not accepted.",
    bad_code: "That code was not accepted.", empty: "No tickets", table: "Table {t}", order: "Order {o}",
    open: "{n} open", recalled: "RECALLED", reprint: "REPRINT", copy: "COPY",
    prints_on: "This screen was silent: tickets print on {printer} until a person acknowledges it on the LAN page.",
    down: "Connection to the gateway lost — retrying…", not_found: "This screen is not configured on the gateway.",
    forbidden: "This device belongs to another screen.",
    age_s: "{s}s", bump_failed: "Bump failed: {e}",
  },
  zh: {
    recall: "撤回 (R)", signin_title: "登录本屏幕", signin: "登录",
    signin_help: "请输入员工令牌，或 LAN 页面上显示的配对码。",
    token: "员工令牌", pair_code: "配对码（6 位）", bad_token: "令牌无效。",
    bad_code: "配对码无效。", empty: "暂无小票", table: "{t} 桌", order: "单号 {o}",
    open: "{n} 张待做", recalled: "已撤回", reprint: "重打", copy: "复制",
    prints_on: "本屏幕曾失联：小票改由 {printer} 打印，需在 LAN 页面确认后恢复。",
    down: "与网关的连接中断，正在重试…", not_found: "网关上没有配置这个屏幕。",
    forbidden: "本设备属于另一个屏幕。",
    age_s: "{s}秒", bump_failed: "划单失败：{e}",
  },
};

const store = window.localStorage;
const displayId = decodeURIComponent(location.pathname.replace(/^\/kds\//, "").replace(/\/$/, ""));
let lang = store.getItem("storeprint.lang") || ((navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en");
let token = store.getItem("storeprint.token") || "";
let view = null;        // the last poll's answer
let viewAt = 0;         // when it arrived, for the ages
let shown = [];         // task_nos on the screen now
let selected = -1;      // index of the selected ticket, -1 for none
let polling = false;
let problem = "";       // what the banner says about the connection
const gone = new Set(); // bumped here, not yet gone from a poll's answer

function t(key, vars) {
  let s = (T[lang] && T[lang][key]) || T.en[key] || key;
  for (const k in vars || {}) s = s.split("{" + k + "}").join(vars[k]);
  return s;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === "class") e.className = attrs[k];
    else if (k.startsWith("on")) e[k] = attrs[k];
    else if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== false) e.setAttribute(k, attrs[k]);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function applyStatic() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.getElementById("lang").textContent = lang === "zh" ? "English" : "中文";
  document.querySelectorAll("[data-i18n]").forEach(e => { e.textContent = t(e.dataset.i18n); });
  document.querySelectorAll("[data-i18n-placeholder]").forEach(e => { e.placeholder = t(e.dataset.i18nPlaceholder); });
}

function showSignin(msg) {
  document.getElementById("signin").hidden = false;
  document.getElementById("board").hidden = true;
  document.getElementById("signin-error").textContent = msg || "";
}

function age(ticket) {
  return ticket.age_s + Math.max(0, Math.floor((Date.now() - viewAt) / 1000));
}

function ageText(s) {
  if (s < 60) return t("age_s", { s });
  const m = Math.floor(s / 60), r = s % 60;
  return m + ":" + String(r).padStart(2, "0");
}

// tickets are what the screen lists: open ones oldest first, then the
// recalled.
function tickets() {
  if (!view) return [];
  const open = view.tickets.filter(x => !gone.has(x.task_no));
  return open.concat(view.recalled.filter(x => !gone.has(x.task_no)).map(x => Object.assign({ recalled: true }, x)));
}

function render() {
  const list = tickets();
  const box = document.getElementById("tickets");
  const d = view ? view.display : null;
  document.getElementById("title").textContent = displayId + (d && d.stations.length ? " · " + d.stations.join(", ") : "");
  document.getElementById("count").textContent = view ? t("open", { n: list.length }) : "";
  document.getElementById("live").className = "dot " + (problem ? "down" : view ? "live" : "");
  const banner = document.getElementById("banner");
  const say = problem || (view && view.prints_on ? t("prints_on", { printer: view.prints_on }) : "");
  banner.hidden = !say;
  banner.textContent = say;
  if (selected >= list.length) selected = -1;
  box.replaceChildren(...list.map((x, i) => card(x, i, d)));
  document.getElementById("empty").hidden = list.length > 0 || !view;
  document.getElementById("recall").disabled = !(view && view.last_bumped);
}

function card(x, i, d) {
  const s = age(x);
  let cls = "ticket";
  if (d && s >= d.red_after_s) cls += " red";
  else if (d && s >= d.amber_after_s) cls += " amber";
  if (x.recalled) cls += " recalled";
  if (i === selected) cls += " selected";
  return el("article", { class: cls, "data-task": x.task_no, "data-index": i + 1, onclick: () => bump(x) },
    el("div", { class: "head" },
      el("span", {}, i < 9 ? el("span", { class: "key" }, i + 1) : null,
        el("span", { class: "table" }, x.table ? t("table", { t: x.table }) : "#" + x.order_id),
        x.recalled ? el("span", { class: "tag" }, t("recalled")) : null,
        x.reprint ? el("span", { class: "tag" }, t("reprint")) : null,
        x.copy_of ? el("span", { class: "tag" }, t("copy")) : null),
      el("span", { class: "age", "data-age": s }, ageText(s))),
    el("div", { class: "order" }, t("order", { o: x.order_id })),
    el("ul", {}, x.items.map(it => el("li", {},
      el("span", { class: "qty" }, it.qty + "×"), it.name,
      it.note ? el("span", { class: "inote" }, it.note) : null))),
    x.note ? el("div", { class: "note" }, x.note) : null);
}

async function api(method, path, body) {
  const resp = await fetch(path, {
    method, headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const err = new Error(data.error || resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return data;
}

// poll is the screen's word to the gateway: what it shows, and its tickets
// back as soon as something changes.
async function poll() {
  if (polling) return;
  polling = true;
  while (token) {
    try {
      const gen = view ? view.generation : 0;
      const v = await api("POST", "/v1/displays/" + encodeURIComponent(displayId) + "/poll", { shown, generation: gen });
      view = v;
      viewAt = Date.now();
      problem = "";
      for (const no of Array.from(gone)) {
        if (!v.tickets.some(x => x.task_no === no) && !v.recalled.some(x => x.task_no === no)) gone.delete(no);
      }
      document.getElementById("signin").hidden = true;
      document.getElementById("board").hidden = false;
      render();
      shown = v.tickets.map(x => x.task_no);
    } catch (e) {
      if (e.status === 401) { token = ""; store.removeItem("storeprint.token"); showSignin(t("bad_token")); break; }
      problem = e.status === 404 ? t("not_found") : e.status === 403 ? t("forbidden") : t("down");
      render();
      await new Promise(r => setTimeout(r, 1000));
    }
  }
  polling = false;
}

async function bump(x) {
  if (!x) return;
  gone.add(x.task_no);
  selected = -1;
  render();
  try {
    await api("POST", "/v1/tasks/" + encodeURIComponent(x.task_no) + "/bump", { display_id: displayId });
  } catch (e) {
    gone.delete(x.task_no);
    problem = t("bump_failed", { e: e.message });
    render();
  }
}

async function recall() {
  if (!view || !view.last_bumped) return;
  try {
    await api("POST", "/v1/tasks/" + encodeURIComponent(view.last_bumped) + "/recall", { display_id: displayId });
  } catch (e) {
    problem = e.message;
    render();
  }
}

// The bump bar: 1-9 select, Enter bumps the selected (or the oldest), R
// recalls the last bumped.
function onKey(ev) {
  if (document.getElementById("board").hidden || ev.target.tagName === "INPUT") return;
  const list = tickets();
  if (ev.key >= "1" && ev.key <= "9") {
    const i = Number(ev.key) - 1;
    if (i < list.length) { selected = selected === i ? -1 : i; render(); }
    ev.preventDefault();
  } else if (ev.key === "Enter") {
    bump(list[selected >= 0 ? selected : 0]);
    ev.preventDefault();
  } else if (ev.key === "r" || ev.key === "R") {
    recall();
    ev.preventDefault();
  } else if (ev.key === "Escape") {
    selected = -1;
    render();
  }
}

async function signIn(ev) {
  ev.preventDefault();
  const tok = document.getElementById("token"), code = document.getElementById("pair-code");
  document.getElementById("signin-error").textContent = "";
  if (code.value.trim()) {
    const resp = await fetch("/v1/pair", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code: code.value.trim(), name: "screen " + displayId }) });
    const data = await resp.json().catch(() => ({}));
    if (!resp.ok) { showSignin(t("bad_code")); return; }
    token = data.token;
  } else {
    token = tok.value.trim();
  }
  tok.value = ""; code.value = "";
  if (!token) return;
  store.setItem("storeprint.token", token);
  poll();
}

function tick() {
  const now = new Date();
  document.getElementById("clock").textContent = String(now.getHours()).padStart(2, "0") + ":" + String(now.getMinutes()).padStart(2, "0");
  document.querySelectorAll(".ticket").forEach(c => {
    const x = tickets().find(y => y.task_no === c.dataset.task);
    if (!x) return;
    const s = age(x);
    const a = c.querySelector(".age");
    a.textContent = ageText(s);
    a.dataset.age = s;
    const d = view.display;
    c.classList.toggle("red", s >= d.red_after_s);
    c.classList.toggle("amber", s >= d.amber_after_s && s < d.red_after_s);
  });
}

function start() {
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    token = params.get("token");
    store.setItem("storeprint.token", token);
  }
  if (params.has("pair")) {
    document.getElementById("pair-code").value = params.get("pair");
  }
  if (params.has("token") || params.has("pair")) history.replaceState(null, "", location.pathname);
  applyStatic();
  document.getElementById("lang").onclick = () => {
    lang = lang === "zh" ? "en" : "zh";
    store.setItem("storeprint.lang", lang);
    applyStatic();
    render();
  };
  document.getElementById("recall").onclick = recall;
  document.getElementById("signin-form").onsubmit = signIn;
  document.addEventListener("keydown", onKey);
  setInterval(tick, 1000);
  tick();
  if (token) poll(); else showSignin("");
}

start();
