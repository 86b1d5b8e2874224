// nadird web console: shows the pages and sends the forms with this origin's
// key, and refreshes the numbers of the crawl page from the JSON API (and
// its charts: charts.js).
//
// Why a script: the session cookie goes to every port of the host, so it is
// not enough alone. The key is made here at sign-in and kept in localStorage,
// which only this origin (scheme, host and port) can read; every request for
// a page, a form or /api/stats carries it in a header that a page of another
// origin cannot add. A plain navigation gets the shell, which asks for the
// page again with the key (browser_sessions.py on the master).
"use strict";

const REFRESH_MS = 3000;
const KEY_STORE = "nadird.console.key";
const KEY_HEADER = "X-Nadird-Console-Key";

function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function keyed(init) {
  const headers = {[KEY_HEADER]: localStorage.getItem(KEY_STORE) || ""};
  return {...init, headers, credentials: "same-origin", cache: "no-store"};
}

// A page the master answered: it takes the place of this one.
function show(html, url, push) {
  const next = new DOMParser().parseFromString(html, "text/html");
  document.title = next.title;
  document.documentElement.lang = next.documentElement.lang;
  if (typeof dropCharts === "function") dropCharts();
  document.body.replaceWith(document.adoptNode(next.body));
  if (url !== window.location.href) {
    if (push) window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
  }
  startRefresh();
  drawCharts();
  document.body.dataset.shown = String(Date.now());
}

async function load(url) {
  const response = await fetch(url, keyed({}));
  show(await response.text(), response.url, false);
}

async function submit(form) {
  if (form.classList.contains("login")) localStorage.setItem(KEY_STORE, newKey());
  const body = new URLSearchParams(new FormData(form));
  const response = await fetch(form.action, keyed({method: "POST", body}));
  if (form.classList.contains("logout")) localStorage.removeItem(KEY_STORE);
  // Followed to the page a form leads to; an answer that is no redirect
  // (a refusal) is shown where the form was.
  show(await response.text(), response.redirected ? response.url : window.location.href, true);
}

function formatNumber(value) {
  if (value === null || value === undefined) return "\u2014";
  if (!Number.isInteger(value)) return value.toLocaleString("en-US", {maximumFractionDigits: 1, minimumFractionDigits: 1});
  return value.toLocaleString("en-US");
}

function formatSeconds(value) {
  const total = Math.max(0, Math.round(value));
  if (total < 60) return total + " s";
  const minutes = Math.floor(total / 60), secs = total % 60;
  if (minutes < 60) return minutes + " m " + secs + " s";
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return hours + " h " + (minutes % 60) + " m";
  return Math.floor(hours / 24) + " d " + (hours % 24) + " h";
}

// The same numbers as pages.overview_numbers on the server; the words
// (done, healthy...) are the page's own, in its language, from data-* of the box.
function numbersOf(stats, words) {
  const answers = stats.http_status;
  const errors = Object.values(stats.errors_by_kind).reduce((a, b) => a + b, 0)
    + (answers["4xx"] || 0) + (answers["5xx"] || 0);
  const queued = stats.queued, rate = stats.pages_per_s;
  let eta;
  if (stats.complete) eta = words.done;
  else if (queued <= 0) eta = formatSeconds(0);
  else if (rate <= 0) eta = words.unknown;
  else eta = formatSeconds(queued / rate);
  return {
    stored: formatNumber(stats.stored_total),
    pages_per_s: formatNumber(rate),
    queued: formatNumber(queued),
    leases: formatNumber(stats.leases),
    errors: formatNumber(errors),
    dead_letters: formatNumber(stats.dead_letters || 0),
    workers: formatNumber(stats.workers),
    seen: formatNumber(stats.seen),
    eta: eta,
    state: stats.state.healthy
      ? words.healthy : words.cannotWrite.replace("{state}", JSON.stringify(stats.state)),
  };
}

async function refresh(box) {
  const response = await fetch(box.dataset.source, keyed({}));
  if (response.status === 401) {
    await load(window.location.href);  // the session ended: the master shows the login form
    return false;
  }
  if (!response.ok) return true;
  const shown = numbersOf(await response.json(), box.dataset);
  for (const cell of document.querySelectorAll("[data-stat]")) {
    const value = shown[cell.dataset.stat];
    if (value !== undefined) cell.textContent = value;
  }
  document.body.dataset.refreshed = String(Date.now());
  return historyCharts();
}

function startRefresh() {
  const box = document.querySelector("[data-source]");
  if (box === null) return;
  const tick = async () => {
    if (!box.isConnected) return;  // another page is shown now
    let again = true;
    try {
      again = await refresh(box);
    } catch (err) {
      again = true;  // the master may be restarting: try again later
    }
    if (again) window.setTimeout(tick, REFRESH_MS);
  };
  window.setTimeout(tick, REFRESH_MS);
}

// A "Copy" button (a command on the URL page): its data-copy to the clipboard.
async function copy(button) {
  await navigator.clipboard.writeText(button.dataset.copy);
  button.textContent = button.dataset.copied;
}

function start() {
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.copy");
    if (button !== null) copy(button).catch(() => {});
  });
  document.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(event.target).catch(() => window.location.reload());
  });
  window.addEventListener("popstate", () => window.location.reload());
  if (document.getElementById("shell") !== null) {
    load(window.location.href).catch(() => {});
  } else {
    startRefresh();
    drawCharts();
  }
}

document.addEventListener("DOMContentLoaded", start);
