// The RED table: per route, its rate, error share and duration
// quantiles over the window of the selected precision, sortable by
// column. Clicking a route pins it: its durations chart (p50, p90, p99 per
// bucket), the heatmap of its durations and its error rate show under the
// table until it is clicked again. A route flagged by api/anomalies in the
// window (its hits, or one of its status classes) carries a mark.

import { getJSON } from './api.js';
import { byId, el } from './dom.js';
import { bucketLabel, numberFormat, rateFormat } from './format.js';
import {
  errorsChartOption, errorsDataOption, heatmapChartOption, heatmapDataOption, durationsChartOption, durationsDataOption,
} from './options.js';
import { load, save } from './state.js';

const hasEcharts = typeof window.echarts !== 'undefined';
const columns = ['name', 'rate', 'errors', 'p50', 'p90', 'p99'];
const red = { sort: load('redSort', 'rate'), pinned: load('redRoute', ''), rows: [], window: 1 };
let flagged = new Map(); // route -> its flags' descriptions, newest first
const chart = { chart: null, heat: null, errors: null, route: '', precision: 0, span: 0, rows: [] };

function value(row, key) {
  switch (key) {
    case 'rate': return row.hits;
    case 'errors': return row.hits ? (row.errors_4xx + row.errors_5xx) / row.hits : 0;
    default: return row[key];
  }
}

// sorted orders the rows by the chosen column, largest first (names
// alphabetically), ties by name.
function sorted(rows) {
  const key = red.sort;
  return rows.slice().sort((a, b) => {
    if (key !== 'name') {
      const d = value(b, key) - value(a, key);
      if (d !== 0) return d;
    }
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

// ms writes a duration of the table; a route none of whose hits kept a
// duration has none to show.
function ms(r, key) {
  return r.timed > 0 ? rateFormat.format(r[key]) + ' ms' : '–';
}

function rowOf(r) {
  const tr = el('tr', 'red-row');
  tr.dataset.route = r.name;
  tr.setAttribute('aria-selected', String(r.name === red.pinned));
  const errors = r.errors_4xx + r.errors_5xx;
  const share = el('td', 'num', r.hits ? rateFormat.format((100 * errors) / r.hits) + ' %' : '–');
  share.title = numberFormat.format(r.errors_4xx) + ' 4xx, ' + numberFormat.format(r.errors_5xx) + ' 5xx';
  if (r.errors_5xx > 0) share.classList.add('bad');
  const name = el('td', 'red-name', r.name);
  name.title = r.name;
  const flags = flagged.get(r.name);
  if (flags) {
    const mark = el('span', 'red-flag', '⚠');
    mark.title = flags.join('\n');
    mark.setAttribute('aria-label', flags.length + (flags.length === 1 ? ' anomaly' : ' anomalies'));
    name.prepend(mark);
    tr.dataset.flags = String(flags.length);
  }
  tr.append(name, el('td', 'num', rateFormat.format(r.hits / red.window) + ' /s'), share,
    el('td', 'num', ms(r, 'p50')), el('td', 'num', ms(r, 'p90')), el('td', 'num', ms(r, 'p99')));
  return tr;
}

// setRouteFlags marks the routes of flags (api/anomalies' list, newest
// first): a flag of "GET /x" or of "GET /x status:5xx" marks GET /x.
export function setRouteFlags(flags) {
  flagged = new Map();
  for (const f of flags) {
    const cut = f.series.lastIndexOf(' status:');
    const route = cut > 0 ? f.series.slice(0, cut) : f.series;
    const what = (cut > 0 ? f.series.slice(cut + 1) + ' ' : 'hits ') + f.kind.replace('_', ' ') + ' at ' + bucketLabel(f.bucket, f.precision);
    if (!flagged.has(route)) flagged.set(route, []);
    flagged.get(route).push(what);
  }
  renderTable();
}

function renderTable() {
  for (const th of byId('red-head').querySelectorAll('button')) {
    th.setAttribute('aria-pressed', String(th.dataset.sort === red.sort));
  }
  byId('red-body').replaceChildren(...sorted(red.rows).map(rowOf));
  byId('red-empty').hidden = red.rows.length > 0;
}

function startCharts() {
  const init = (id, option) => {
    const c = window.echarts.init(byId(id), null, { renderer: 'canvas' });
    c.setOption(option);
    return c;
  };
  chart.chart = init('durations-chart', durationsChartOption(chart));
  chart.heat = init('heat-chart', heatmapChartOption(chart));
  chart.errors = init('errors-chart', errorsChartOption(chart));
}

// refreshDurations draws the pinned route's durations, or hides the chart.
async function refreshDurations(p) {
  const box = byId('durations');
  if (!red.pinned || !red.rows.some((r) => r.name === red.pinned)) {
    box.hidden = true;
    return;
  }
  const lat = await getJSON('api/durations/' + encodeURIComponent(red.pinned) + '?precision=' + p.seconds + '&last=' + p.last +
    '&heatmap=1');
  box.hidden = false;
  byId('durations-title').textContent = lat.name + ' · duration per ' + p.label + ' bucket';
  Object.assign(chart, { route: lat.name, precision: lat.precision, span: lat.to - lat.from + lat.precision, rows: lat.heatmap.rows });
  if (!hasEcharts) return;
  if (!chart.chart) startCharts();
  chart.chart.setOption(durationsDataOption(lat));
  chart.heat.setOption(heatmapDataOption(lat));
  chart.errors.setOption(errorsDataOption(lat));
}

// refreshRoutes reads the RED table of precision p (an entry of
// cfg.precisions) and the pinned route's durations.
export async function refreshRoutes(p) {
  const answer = await getJSON('api/routes?precision=' + p.seconds + '&last=' + p.last);
  red.rows = answer.routes;
  red.window = Math.max(1, answer.to - answer.from + answer.precision);
  byId('red-window').textContent = 'last ' + p.window + ' in ' + p.label + ' buckets';
  renderTable();
  await refreshDurations(p);
}

// watchRoutes sorts on a column head's click and pins or unpins a route
// on a row's; refresh re-reads the pinned route's durations.
export function watchRoutes(refresh) {
  for (const b of byId('red-head').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      red.sort = columns.includes(b.dataset.sort) ? b.dataset.sort : 'rate';
      save('redSort', red.sort);
      renderTable();
    });
  }
  byId('red-body').addEventListener('click', (ev) => {
    const tr = ev.target.closest('.red-row');
    if (!tr) return;
    red.pinned = red.pinned === tr.dataset.route ? '' : tr.dataset.route;
    save('redRoute', red.pinned);
    renderTable();
    refresh();
  });
  window.addEventListener('resize', () => {
    for (const c of [chart.chart, chart.heat, chart.errors]) if (c) c.resize();
  });
}
