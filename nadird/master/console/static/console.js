// nadird web console: refreshes the numbers of the crawl page from the JSON
// API every few seconds (the session cookie is enough for GET /api/stats).
// The page works without it; nothing here changes anything on the master.
"use strict";

const REFRESH_MS = 3000;

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
    stored: formatNumber(stats.stored_total === null ? stats.stored_this_run : stats.stored_total),
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
  const response = await fetch(box.dataset.source, {credentials: "same-origin", cache: "no-store"});
  if (response.status === 401) {
    window.location.reload();  // the session ended: the server shows the login form
    return false;
  }
  if (!response.ok) return true;
  const shown = numbersOf(await response.json(), box.dataset);
  for (const cell of document.querySelectorAll("[data-stat]")) {
    const value = shown[cell.dataset.stat];
    if (value !== undefined) cell.textContent = value;
  }
  document.body.dataset.refreshed = String(Date.now());
  return true;
}

function start() {
  const box = document.querySelector("[data-source]");
  if (box === null) return;
  const tick = async () => {
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

document.addEventListener("DOMContentLoaded", start);
