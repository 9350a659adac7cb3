// Every echarts option the page sets is built here, and only here:
// chartOption when a chart is made, dataOption on every poll, zoomOption
// for the shared zoom. The server sends data and configuration only (see
// pageConfig in page.go); the one thing it decides about a chart is how
// its container is initialised (cfg.chartInit: renderer and theme, from
// go-echarts), which is echarts.init's business, not an option's.
//
// Every series is drawn the same way: complete buckets as a solid line
// over a light area, the still-open bucket as a dashed segment ending in
// a hollow dot, since its count is still growing. Its forecast (the
// expected line, the bands and the anomalies' marks) comes from
// forecast.js, under the line.

import { bandSeries, forecastText, horizon } from './forecast.js';
import { axisTime, bucketLabel, compactFormat, numberFormat, rateFormat } from './format.js';

// Chart colours: one hue per meaning, readable on white. dashboard.css
// draws the legend's swatches in the same two line colours.
const color = {
  line: '#2563eb',
  area: 'rgba(37, 99, 235, 0.10)',
  partial: '#f59e0b',
  visitors: '#7c3aed',
  axis: '#64748b',
  grid: '#e2e8f0',
};

const series = [
  {
    id: 'complete',
    name: 'complete buckets',
    type: 'line',
    z: 3,
    showSymbol: false,
    symbol: 'circle',
    itemStyle: { color: color.line },
    lineStyle: { color: color.line, width: 2 },
    areaStyle: { color: color.area },
  },
  {
    id: 'partial',
    name: 'current bucket (still filling)',
    type: 'line',
    z: 3,
    showSymbol: true,
    symbol: 'emptyCircle',
    symbolSize: 7,
    itemStyle: { color: color.partial },
    lineStyle: { color: color.partial, width: 2, type: 'dashed' },
  },
];

// The hits card's visitors: a line of their own, always visitors per
// bucket (a rate of visitors means nothing). Counting hits, it shares
// their axis: a bucket's visitors are at most its hits, so the line runs
// under theirs. Counting hits per second, it has an axis of its own at
// the right.
const visitorsSeries = {
  id: 'visitors',
  name: 'visitors',
  type: 'line',
  showSymbol: false,
  symbol: 'circle',
  itemStyle: { color: color.visitors },
  lineStyle: { color: color.visitors, width: 2 },
};

function hitsText(card, value) {
  if (card.mode === 'rate') return '\n' + rateFormat.format(value) + ' hits/s';
  return '\n' + numberFormat.format(value) + (value === 1 ? ' hit' : ' hits');
}

// visitorsText is the tooltip's line for the visitors of a bucket, with
// its hits per visitor when the chart shows counts.
function visitorsText(card, visitors, hits) {
  let text = '\n' + numberFormat.format(visitors) + (visitors === 1 ? ' visitor' : ' visitors');
  if (card.mode !== 'rate' && visitors > 0 && hits !== null) {
    const each = hits / visitors;
    text += ' · ' + rateFormat.format(each) + (each === 1 ? ' hit' : ' hits') + ' per visitor';
  }
  return text;
}

// tooltipText is the crosshair's tooltip: the full name (a card's title
// may be cut short), the bucket, its value and, on the hits card, its
// visitors.
function tooltipText(card, params) {
  const all = Array.isArray(params) ? params : [params];
  if (!all.length) return '';
  const list = all.filter((p) => p.seriesId === 'complete' || p.seriesId === 'partial');
  const visitor = all.find((p) => p.seriesId === 'visitors');
  // Both series hold the last complete bucket: take the last entry. A
  // bucket still to come has only its forecast.
  const point = list.length ? list[list.length - 1] : visitor || all[0];
  const t = point.value[0] / 1000;
  const value = list.length ? point.value[1] : null;
  const width = card.precision;
  let text = card.name + '\n' + bucketLabel(t, width);
  if (width < 3600) text += ' – ' + bucketLabel(t + width, width);
  if (value !== null) text += hitsText(card, value); // null: the hits line is hidden
  if (t === card.current) text += ' so far (still filling)';
  if (visitor) text += visitorsText(card, visitor.value[1], value);
  return text + forecastText(card, t);
}

function xAxis(card) {
  return {
    type: 'time',
    axisLine: { lineStyle: { color: color.grid } },
    axisTick: { show: false },
    // The ends of the window fall between round times: label only the
    // round ones, so no label crowds its neighbour.
    axisLabel: {
      color: color.axis, fontSize: 11, hideOverlap: true, showMinLabel: false, showMaxLabel: false,
      formatter: (v) => axisTime(v, card.span),
    },
    splitLine: { show: false },
  };
}

function yAxis(card) {
  return {
    type: 'value',
    min: 0,
    minInterval: 1,
    splitNumber: 4,
    axisLabel: {
      color: color.axis, fontSize: 11, showMinLabel: true, showMaxLabel: true,
      // Rates are often below one: keep their significant digits.
      formatter: (v) => (card.mode === 'rate' && v < 1000 ? rateFormat.format(v) : compactFormat.format(v)),
    },
    splitLine: { show: true, lineStyle: { color: color.grid } },
  };
}

function visitorsAxis() {
  return {
    type: 'value',
    position: 'right',
    min: 0,
    minInterval: 1,
    splitNumber: 4,
    axisLabel: { color: color.visitors, fontSize: 11, formatter: (v) => compactFormat.format(v) },
    splitLine: { show: false },
  };
}

// chartOption is the whole option of a new chart. Its formatters read the
// card (name, precision, current, span, mode) when they run, so they
// follow each poll without a new option.
export function chartOption(card, zoom) {
  const lines = series.map((s) => Object.assign({ data: [] }, s));
  if (card.visitors) lines.push(Object.assign({ data: [] }, visitorsSeries));
  for (const s of bandSeries) lines.push(Object.assign({ data: [] }, s));
  return {
    animation: false,
    color: [color.line, color.partial, color.visitors],
    legend: {
      show: Boolean(card.visitors), data: ['visitors'], top: 0, right: 8, itemHeight: 8,
      textStyle: { color: color.axis, fontSize: 11 },
    },
    grid: { left: 6, right: 18, top: card.visitors ? 26 : 14, bottom: 4, containLabel: true },
    tooltip: {
      show: true,
      trigger: 'axis',
      axisPointer: { type: 'line', snap: true },
      // Drawn on the canvas, not as HTML.
      renderMode: 'richText',
      confine: true,
      formatter: (params) => tooltipText(card, params),
    },
    xAxis: xAxis(card),
    yAxis: card.visitors ? [yAxis(card), visitorsAxis()] : yAxis(card),
    // Wheel or pinch zooms, drag pans; every chart follows (echarts.connect).
    dataZoom: [Object.assign({ type: 'inside', xAxisIndex: 0, filterMode: 'none', zoomOnMouseWheel: true, moveOnMouseMove: true }, zoomOption(zoom))],
    series: lines,
  };
}

// zoomOption is the dataZoom range of a zoom in unix seconds, or of the
// whole window when zoom is null.
export function zoomOption(zoom) {
  if (!zoom) return { start: 0, end: 100 };
  return { startValue: zoom.from * 1000, endValue: zoom.to * 1000 };
}

// splitSeries turns zero-filled samples into the solid line of complete
// buckets and the dashed segment into the still-open one, whose hollow
// dot marks only the open bucket.
// In rate mode a count becomes hits per second: over the bucket's
// width, and for the still-open bucket over the seconds it has run.
function splitSeries(samples, current, width, now, mode) {
  const perSecond = (s) => {
    if (mode !== 'rate') return s.count;
    const seconds = s.time === current ? Math.min(width, Math.max(1, now - current)) : width;
    return s.count / seconds;
  };
  const points = samples.map((s) => [s.time * 1000, perSecond(s)]);
  const n = points.length;
  if (n > 0 && samples[n - 1].time === current) {
    const partial = [points[n - 1]];
    if (n > 1) partial.unshift({ value: points[n - 2], symbol: 'none' });
    return { complete: points.slice(0, n - 1), partial: partial };
  }
  return { complete: points, partial: [] };
}

// dataOption is what a poll changes in a chart: the window of the
// overview and the horizon after it, the samples of one series, the zoom
// and the mode; on the hits
// card (card.visitors) also the visitors per bucket, an answer of
// api/visitors or null when there are none to show.
export function dataOption(card, overview, samples, zoom, visitors) {
  const parts = splitSeries(samples, overview.current, overview.precision, overview.now, card.mode);
  const option = {
    xAxis: { min: overview.from * 1000, max: (overview.to + horizon * overview.precision) * 1000 },
    yAxis: { minInterval: card.mode === 'rate' ? 0 : 1 },
    dataZoom: [zoomOption(zoom)],
    series: [
      { id: 'complete', data: parts.complete },
      { id: 'partial', data: parts.partial },
    ],
  };
  if (card.visitors) {
    const shown = Boolean(visitors && visitors.window.visitors > 0);
    const own = card.mode === 'rate';
    option.yAxis = [option.yAxis, { show: shown && own }];
    option.legend = { show: shown };
    option.series.push({
      id: 'visitors', yAxisIndex: own ? 1 : 0,
      data: shown ? visitors.buckets.map((b) => [b.time * 1000, b.visitors]) : [],
    });
  }
  return option;
}

// The durations chart of a pinned route: one line per quantile, in
// milliseconds per bucket; a bucket without requests is a gap.
const quantileLines = [
  { key: 'p50', color: '#16a34a' },
  { key: 'p90', color: '#d97706' },
  { key: 'p99', color: '#dc2626' },
];

function durationsTooltip(name, width, params) {
  const list = Array.isArray(params) ? params : [params];
  if (!list.length) return '';
  const t = list[0].value[0] / 1000;
  let text = name + '\n' + bucketLabel(t, width);
  for (const p of list) {
    text += '\n' + p.seriesName + ' ' + (p.value[1] === null ? '–' : rateFormat.format(p.value[1]) + ' ms');
  }
  return text;
}

// durationsChartOption is the whole option of a route's durations chart;
// chart.route is read when the tooltip runs, so it follows a new pin.
export function durationsChartOption(chart) {
  return {
    animation: false,
    color: quantileLines.map((q) => q.color),
    legend: { show: true, top: 0, right: 8, textStyle: { color: color.axis, fontSize: 11 } },
    grid: { left: 6, right: 18, top: 28, bottom: 4, containLabel: true },
    tooltip: {
      show: true, trigger: 'axis', renderMode: 'richText', confine: true,
      formatter: (params) => durationsTooltip(chart.route, chart.precision, params),
    },
    xAxis: xAxis(chart),
    yAxis: {
      type: 'value', min: 0, splitNumber: 4,
      axisLabel: { color: color.axis, fontSize: 11, formatter: (v) => rateFormat.format(v) + ' ms' },
      splitLine: { show: true, lineStyle: { color: color.grid } },
    },
    series: quantileLines.map((q) => ({
      id: q.key, name: q.key, type: 'line', showSymbol: false, connectNulls: false,
      itemStyle: { color: q.color }, lineStyle: { color: q.color, width: 2 }, data: [],
    })),
  };
}

// durationsDataOption is what a poll changes in the durations chart: the
// window and each quantile per bucket.
export function durationsDataOption(lat) {
  return {
    xAxis: { min: lat.from * 1000, max: lat.to * 1000 },
    series: quantileLines.map((q) => ({
      id: q.key,
      data: lat.buckets.map((b) => [b.time * 1000, b.count > 0 ? b[q.key] : null]),
    })),
  };
}

// The heatmap of a pinned route: one column per bucket, one row per
// duration row of the answer (fastest at the bottom), each cell shaded by
// its count of requests; an empty cell is left blank.
const heatColors = ['#dbeafe', '#60a5fa', '#2563eb', '#1e3a8a'];

function heatTooltip(chart, p) {
  const row = chart.rows[p.value[1]];
  const n = p.value[2];
  return chart.route + '\n' + p.name + '\n' + (row ? row.label : '') + ': ' +
    numberFormat.format(n) + (n === 1 ? ' request' : ' requests');
}

// heatmapChartOption is the whole option of a route's heatmap; chart.rows
// and chart.route are read when the tooltip runs.
export function heatmapChartOption(chart) {
  return {
    animation: false,
    grid: { left: 6, right: 18, top: 8, bottom: 40, containLabel: true },
    tooltip: { show: true, trigger: 'item', renderMode: 'richText', confine: true, formatter: (p) => heatTooltip(chart, p) },
    xAxis: {
      type: 'category', data: [], splitArea: { show: false },
      axisLine: { lineStyle: { color: color.grid } }, axisTick: { show: false },
      axisLabel: { color: color.axis, fontSize: 11, hideOverlap: true },
    },
    yAxis: {
      type: 'category', data: [], name: 'duration', nameLocation: 'end',
      nameTextStyle: { color: color.axis, fontSize: 11, align: 'left' },
      axisLine: { lineStyle: { color: color.grid } }, axisTick: { show: false },
      axisLabel: { color: color.axis, fontSize: 11 },
      splitLine: { show: true, lineStyle: { color: color.grid } },
    },
    visualMap: {
      type: 'continuous', min: 1, max: 1, calculable: false, orient: 'horizontal', left: 'center', bottom: 0,
      itemHeight: 120, itemWidth: 10, text: ['more', 'fewer requests'], textStyle: { color: color.axis, fontSize: 11 },
      inRange: { color: heatColors }, outOfRange: { color: 'rgba(0, 0, 0, 0)' },
    },
    series: [{ id: 'heat', name: 'requests', type: 'heatmap', data: [], itemStyle: { borderColor: '#fff', borderWidth: 1 } }],
  };
}

// heatmapDataOption is what a poll changes in the heatmap: a column per
// bucket, a row per duration row, and every cell ('-' for an empty one,
// which echarts leaves unpainted).
export function heatmapDataOption(lat) {
  const hm = lat.heatmap;
  const data = [];
  let most = 1;
  hm.counts.forEach((counts, x) => counts.forEach((n, y) => {
    data.push([x, y, n > 0 ? n : '-']);
    most = Math.max(most, n);
  }));
  return {
    xAxis: { data: lat.buckets.map((b) => bucketLabel(b.time, lat.precision)) },
    yAxis: { data: hm.rows.map((r) => r.label) },
    visualMap: { min: 1, max: most },
    series: [{ id: 'heat', data: data }],
  };
}

// The error rate of a pinned route: the share of its hits per bucket
// answered 4xx and 5xx, in percent; a bucket without hits is a gap.
const errorLines = [
  { key: 'errors_4xx', name: '4xx', color: '#d97706' },
  { key: 'errors_5xx', name: '5xx', color: '#dc2626' },
];

// errorsChartOption is the whole option of a route's error-rate chart.
export function errorsChartOption(chart) {
  return {
    animation: false,
    color: errorLines.map((l) => l.color),
    legend: { show: true, top: 0, right: 8, textStyle: { color: color.axis, fontSize: 11 } },
    grid: { left: 6, right: 18, top: 28, bottom: 4, containLabel: true },
    tooltip: {
      show: true, trigger: 'axis', renderMode: 'richText', confine: true,
      formatter: (params) => durationsTooltip(chart.route, chart.precision, params).replace(/ ms/g, ' %'),
    },
    xAxis: xAxis(chart),
    yAxis: {
      type: 'value', min: 0, splitNumber: 4,
      axisLabel: { color: color.axis, fontSize: 11, formatter: (v) => rateFormat.format(v) + ' %' },
      splitLine: { show: true, lineStyle: { color: color.grid } },
    },
    series: errorLines.map((l) => ({
      id: l.key, name: l.name, type: 'line', showSymbol: true, symbolSize: 5, connectNulls: false,
      itemStyle: { color: l.color }, lineStyle: { color: l.color, width: 2 }, data: [],
    })),
  };
}

// errorsDataOption is what a poll changes in the error-rate chart.
export function errorsDataOption(lat) {
  const hm = lat.heatmap;
  return {
    xAxis: { min: lat.from * 1000, max: lat.to * 1000 },
    series: errorLines.map((l) => ({
      id: l.key,
      data: lat.buckets.map((b, i) => [b.time * 1000, hm.hits[i] > 0 ? (100 * hm[l.key][i]) / hm.hits[i] : null]),
    })),
  };
}
