// The chart grid: one card per series, pinned ones first, then the
// busiest. Every chart joins one echarts group, so a zoom or the
// crosshair on one shows on all; the zoomed window goes into the URL.
// The options themselves come from options.js, the forecast layer from
// forecast.js.

import { cfg } from './config.js';
import { byId, el } from './dom.js';
import { forecastData, wantForecast } from './forecast.js';
import { numberFormat, timeZone } from './format.js';
import { chartOption, dataOption } from './options.js';
import { setZoom, view } from './state.js';

const hasEcharts = typeof window.echarts !== 'undefined';
const chartGroup = 'pulse';
const cards = new Map(); // series name -> card
// focus is the anomaly or alert last clicked: { name, bucket, scroll }
// or { name, mark, scroll }, mark being the alert's { since, window }.
let focus = null;

// onZoom follows a zoom or pan of any chart: the other charts follow
// through echarts.connect, the URL records the window.
function onZoom(card) {
  const dz = card.chart.getOption().dataZoom;
  if (!dz || !dz.length) return;
  const z = dz[0];
  let zoom = view.zoom;
  if (z.start <= 0 && z.end >= 100) {
    zoom = null;
  } else if (typeof z.startValue === 'number' && typeof z.endValue === 'number') {
    zoom = { from: z.startValue / 1000, to: z.endValue / 1000 };
  }
  setZoom(zoom);
  byId('reset-zoom').hidden = !zoom;
}

// resetZoom shows the whole window on every chart again.
export function resetZoom() {
  setZoom(null);
  for (const card of cards.values()) {
    if (card.chart) card.chart.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
  }
  byId('reset-zoom').hidden = true;
}

export function resizeCharts() {
  for (const card of cards.values()) if (card.chart) card.chart.resize();
}

// makeCard builds a card's elements; its pin button is handled by the
// grid's click listener (main.js).
function makeCard(name) {
  const card = {
    name: name, chart: null, precision: 0, current: 0, span: 0, mode: view.mode, visitors: name === cfg.visitors.name,
    forecast: null, forecastKey: '', forecastAt: new Map(), highlight: 0, mark: null,
  };
  card.root = el('article', 'card');
  card.root.dataset.series = name;
  const head = el('div', 'card-head');
  card.title = el('h3', 'card-title', name);
  card.title.title = name;
  card.total = el('span', 'card-total');
  card.pin = el('button', 'pin');
  card.pin.type = 'button';
  head.append(card.title, card.total, card.pin);
  card.chartEl = el('div', 'chart');
  card.chartEl.setAttribute('role', 'img');
  card.chartEl.setAttribute('aria-label', 'Hits of ' + name + ' over time');
  card.chartEl.title = '';
  card.root.append(head, card.chartEl);
  return card;
}

// startChart draws a card's chart the first time it has data.
function startChart(card) {
  const init = cfg.chartInit;
  card.chart = window.echarts.init(card.chartEl, init.theme || null, { renderer: init.renderer });
  card.chart.setOption(chartOption(card, view.zoom));
  card.chart.group = chartGroup;
  window.echarts.connect(chartGroup);
  card.chart.on('datazoom', () => onZoom(card));
  if (typeof ResizeObserver !== 'undefined') {
    card.resizer = new ResizeObserver(() => card.chart && card.chart.resize());
    card.resizer.observe(card.chartEl);
  }
}

function updateCard(card, series, overview, precision, pinned, visitors) {
  card.precision = overview.precision;
  card.current = overview.current;
  card.span = overview.to - overview.from + overview.precision;
  card.root.dataset.pinned = String(pinned);
  card.pin.textContent = pinned ? '★' : '☆';
  card.pin.title = pinned ? 'Unpin this series' : 'Pin this series';
  card.pin.setAttribute('aria-pressed', String(pinned));
  const strong = el('strong', '', numberFormat.format(series.total));
  card.total.replaceChildren(strong, document.createTextNode(' in ' + precision.window));
  card.mode = view.mode;
  if (!hasEcharts) return;
  if (!card.chart) startChart(card);
  card.chart.setOption(dataOption(card, overview, series.samples, view.zoom, visitors));
  card.chart.setOption({ series: forecastData(card) });
  wantForecast(card, overview.precision, overview.current, applyForecast);
}

// applyForecast draws a card's forecast once read.
function applyForecast(card) {
  if (card.chart && !card.chart.isDisposed()) card.chart.setOption({ series: forecastData(card) });
}

// focusBucket highlights the bucket (unix seconds) on the chart of series
// name and brings the chart into view, now or once a poll charts it.
export function focusBucket(name, bucket) {
  focus = { name: name, bucket: bucket, mark: null, scroll: true };
  for (const card of cards.values()) markFocus(card);
}

// focusWindow marks an alert's window, mark { since, window } in
// seconds, on the chart of series name and brings the chart into view,
// now or once a poll charts it.
export function focusWindow(name, mark) {
  focus = { name: name, bucket: 0, mark: mark, scroll: true };
  for (const card of cards.values()) markFocus(card);
}

// markFocus shows on a card whether it holds the focused bucket or alert
// window; the first card to show it scrolls into view.
function markFocus(card) {
  const mine = Boolean(focus && focus.name === card.name);
  const bucket = mine ? focus.bucket || 0 : 0;
  const mark = mine ? focus.mark || null : null;
  card.root.classList.toggle('focused', mine);
  card.root.dataset.highlight = String(bucket);
  if (card.highlight !== bucket || card.mark !== mark) {
    card.highlight = bucket;
    card.mark = mark;
    applyForecast(card);
  }
  if (mine && focus.scroll && card.root.isConnected) {
    focus.scroll = false;
    card.root.scrollIntoView({ block: 'center', behavior: 'smooth' });
  }
}

function dropCard(card) {
  if (card.resizer) card.resizer.disconnect();
  if (card.chart) card.chart.dispose();
  card.root.remove();
}

// wantedCards lists the series to chart, in order: the pinned ones, then
// the busiest that are not pinned. Pinned is as the overview was asked:
// a series pinned since keeps its card until the next overview moves it.
function wantedCards(overview) {
  const wanted = [];
  const pinned = new Set(overview.pinned.map((s) => s.name));
  for (const s of overview.pinned) wanted.push({ series: s, pinned: true });
  for (const s of overview.top) {
    if (!pinned.has(s.name)) wanted.push({ series: s, pinned: false });
  }
  return wanted;
}

function showEmpty(wanted) {
  const empty = byId('charts-empty');
  if (!hasEcharts) {
    empty.textContent = 'Charts cannot be drawn: echarts did not load. Totals are still live.';
    empty.hidden = false;
    byId('assets-notice').hidden = false;
  } else {
    empty.textContent = 'No traffic in this window yet.';
    empty.hidden = wanted.length > 0;
  }
}

// renderCharts shows an overview at the given precision (an entry of
// cfg.precisions), keeping the cards of series still shown; visitors is
// the answer of api/visitors for the hits card, or null.
export function renderCharts(overview, precision, visitors) {
  byId('window-label').textContent = 'last ' + precision.window + ' in ' + precision.label + ' buckets · ' +
    (view.mode === 'rate' ? 'hits per second' : 'hits per bucket') + ' · times in ' + timeZone;
  const wanted = wantedCards(overview);
  const keep = new Set(wanted.map((w) => w.series.name));
  for (const [name, card] of cards) {
    if (!keep.has(name)) {
      dropCard(card);
      cards.delete(name);
    }
  }
  const grid = byId('chart-grid');
  wanted.forEach((w, i) => {
    let card = cards.get(w.series.name);
    if (!card) {
      card = makeCard(w.series.name);
      cards.set(w.series.name, card);
    }
    if (grid.children[i] !== card.root) grid.insertBefore(card.root, grid.children[i] || null);
    updateCard(card, w.series, overview, precision, w.pinned, card.visitors ? visitors : null);
  });
  showEmpty(wanted);
  for (const card of cards.values()) markFocus(card);
}
