// nadird web console: the charts, drawn with uPlot (uplot.min.js, served
// beside this script; nothing from elsewhere, no inline script).
//
// Two kinds of chart box (<div class="chart">), both made by the master's
// templates:
// - data-inline: its points as JSON in the attribute ({"time": [...],
//   "columns": {"label": [...]}}), e.g. a page's prices over its versions;
// - inside a box with data-history (the Crawl page): the columns named in
//   data-columns ({"key": "label"}, or data-kinds for a column of columns)
//   from /api/stats/history, read again with the page's numbers.
// Each line has its own dash pattern and marker (filled or hollow) besides
// its colour, and a label in the legend: no line is told by colour alone.
// A drawn box says how many points it holds (data-points) for the tests.
"use strict";

const CHART_HEIGHT = 220;
const MARKERS_UP_TO = 120;  // points drawn as markers up to this many, lines only beyond
const LINE_STYLES = [
  {stroke: "#1f5fa8", dash: null, hollow: false},
  {stroke: "#b3471d", dash: [8, 4], hollow: true},
  {stroke: "#2e7d32", dash: [2, 3], hollow: false},
  {stroke: "#6a3d9a", dash: [12, 4, 2, 4], hollow: true},
  {stroke: "#8a6d00", dash: [4, 4], hollow: false},
  {stroke: "#3b3b3b", dash: [1, 5], hollow: true},
];

// A label (an error kind, a field's name) with its bidirectional controls
// written as escapes, as the master writes every value (common/visible.py).
function visible(label) {
  return String(label).replace(/[\u202a-\u202e\u2066-\u2069]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16));
}

function lineOf(index, label) {
  const style = LINE_STYLES[index % LINE_STYLES.length];
  return {
    label: visible(label),
    stroke: style.stroke,
    width: 2,
    dash: style.dash || undefined,
    spanGaps: false,  // a null (no rate across a gap in sampling) is a gap
    points: {
      show: (u) => u.data[0].length <= MARKERS_UP_TO,
      size: 7,
      width: 2,
      stroke: style.stroke,
      fill: style.hollow ? "#ffffff" : style.stroke,
    },
  };
}

// uPlot's date templates as the console writes times: 2026-12-02 15:04, a
// 24-hour clock and ISO dates in either language, not 12/2/26 3:04pm.
function isoTemplate(template) {
  return template.replace("{M}/{D}", "{MM}-{DD}").replace("/{YY}", "")
    .replace("{h}", "{HH}").replace("{aa}", "");
}

// columns: [[label, values], ...] sharing the times `xs` (epoch seconds).
// A chart already drawn with the same lines only takes the new points (no
// flicker every refresh); other lines (a new error kind) draw it anew.
function plot(box, xs, columns) {
  const labels = JSON.stringify(columns.map(([label]) => label));
  box.dataset.points = String(xs.length);
  box.dataset.lines = String(columns.length);
  const empty = box.parentElement.querySelector(".chart-empty");
  if (empty !== null) empty.hidden = xs.length > 0 && columns.length > 0;
  const data = [xs].concat(columns.map(([, values]) => values));
  if (box.uplot && box.dataset.labels === labels && xs.length > 0) {
    box.uplot.setData(data);
    return;
  }
  if (box.uplot) box.uplot.destroy();
  box.uplot = null;
  box.dataset.labels = labels;
  if (xs.length === 0 || columns.length === 0) return;
  const options = {
    width: Math.max(320, box.clientWidth || 600),
    height: CHART_HEIGHT,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),  // the console's times are UTC
    fmtDate: (template) => uPlot.fmtDate(isoTemplate(template)),
    series: [{label: box.dataset.xlabel || "UTC"}]
      .concat(columns.map(([label], i) => lineOf(i, label))),
    axes: [{}, {size: 70}],
    legend: {live: true},
  };
  box.uplot = new uPlot(options, data, box);
}

function inlineCharts() {
  for (const box of document.querySelectorAll(".chart[data-inline]")) {
    const data = JSON.parse(box.dataset.inline);
    plot(box, data.time, Object.entries(data.columns));
  }
}

function historyColumns(box, data) {
  if (box.dataset.kinds !== undefined) return Object.entries(data[box.dataset.kinds] || {});
  return Object.entries(JSON.parse(box.dataset.columns)).map(([key, label]) => [label, data[key]]);
}

// The Crawl page's charts, from /api/stats/history; false once the session ended.
async function historyCharts() {
  const section = document.querySelector("[data-history]");
  if (section === null) return true;
  const response = await fetch(section.dataset.history, keyed({}));
  if (response.status === 401) return false;
  if (!response.ok) return true;
  const data = await response.json();
  for (const box of section.querySelectorAll(".chart")) plot(box, data.time, historyColumns(box, data));
  section.dataset.samples = String(data.samples);
  document.body.dataset.charted = String(Date.now());
  return true;
}

// Before another page takes this one's place: uPlot keeps every live chart
// (for its window listeners) until it is destroyed.
function dropCharts() {
  for (const box of document.querySelectorAll(".chart")) {
    if (box.uplot) box.uplot.destroy();
    box.uplot = null;
  }
}

function drawCharts() {
  if (typeof uPlot === "undefined") return;
  inlineCharts();
  historyCharts().catch(() => {});
}

// A window made narrower or wider: each chart takes its box's new width.
function fitCharts() {
  for (const box of document.querySelectorAll(".chart")) {
    if (box.uplot) box.uplot.setSize({width: Math.max(320, box.clientWidth), height: CHART_HEIGHT});
  }
}

window.addEventListener("resize", () => {
  window.clearTimeout(fitCharts.timer);
  fitCharts.timer = window.setTimeout(fitCharts, 150);
});

