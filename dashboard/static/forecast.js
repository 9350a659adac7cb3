// The forecast layer of a series chart: the expected line, the 80 % and
// 95 % bands behind the hits, continued past the current bucket over the
// horizon, and a mark on each bucket flagged as an anomaly.
//
// A card's forecast is read from api/forecast at most once per closed
// bucket of its precision: between two closings the answer cannot change.
// A series with too little history (422) simply has no band, and is asked
// again a horizon later.

import { windowArea } from './alerts.js';
import { getJSON } from './api.js';
import { numberFormat, rateFormat } from './format.js';

// horizon is how many buckets ahead the charts look; every chart's time
// axis ends that far past the current bucket, so the charts stay aligned.
export const horizon = 12;

const color = {
  expected: '#475569',
  band80: 'rgba(100, 116, 139, 0.24)',
  band95: 'rgba(100, 116, 139, 0.13)',
  future: 'rgba(100, 116, 139, 0.06)',
  anomaly: '#dc2626',
  highlight: 'rgba(220, 38, 38, 0.12)',
};

// kindNames are the flags' kinds as the page says them.
export const kindNames = { spike: 'spike', drop: 'drop', level_shift: 'level shift' };

// kindName says a kind, and a level shift's direction: a shift up and a
// shift down are not the same news.
export function kindName(kind, direction) {
  const name = kindNames[kind] || kind;
  return kind === 'level_shift' && direction ? name + ' ' + direction : name;
}

const band = (id, name, fill, stack) => ({
  id: id, name: name, type: 'line', stack: stack, showSymbol: false, silent: true, z: 1, connectNulls: false,
  lineStyle: { opacity: 0 }, itemStyle: { color: fill }, areaStyle: fill ? { color: fill, origin: 'auto' } : undefined,
});

// bandSeries are the forecast's series of a new chart, drawn under the
// hits: each band is a transparent lower edge with its width stacked on.
export const bandSeries = [
  band('lo95', 'lower 95 %', null, 'band95'),
  band('band95', '95 % band', color.band95, 'band95'),
  band('lo80', 'lower 80 %', null, 'band80'),
  band('band80', '80 % band', color.band80, 'band80'),
  {
    id: 'expected', name: 'expected', type: 'line', showSymbol: false, silent: true, z: 2, connectNulls: false,
    itemStyle: { color: color.expected }, lineStyle: { color: color.expected, width: 1.5, type: [4, 3] },
  },
  {
    id: 'anomalies', name: 'anomalies', type: 'scatter', symbol: 'circle', symbolSize: 10, z: 5,
    itemStyle: { color: color.anomaly, borderColor: '#fff', borderWidth: 2 },
  },
];

// wantForecast reads card's forecast unless it already has the one of
// this closed bucket, then calls apply(card) with card.forecast set (null
// when there is none to show).
export function wantForecast(card, precision, current, apply) {
  const key = precision + ':' + current;
  if (card.forecastKey === key) return;
  // Too little history grows by one bucket per bucket: ask again only
  // after a horizon's worth.
  const wait = card.forecastWait;
  if (wait && wait.precision === precision && current < wait.until) return;
  card.forecastKey = key;
  if (card.forecast && card.forecast.precision !== precision) {
    card.forecast = null;
    card.forecastAt = new Map();
  }
  const url = 'api/forecast/' + encodeURIComponent(card.name) + '?precision=' + precision + '&kind=hits&horizon=' + horizon;
  // A 422 leaves the chart without a band; any other failure keeps the
  // last forecast until the next bucket closes, as the overview's own
  // poll reports the outage.
  const last = card.forecast;
  getJSON(url).catch((err) => {
    card.forecastWait = err.status === 422 ? { precision: precision, until: current + horizon * precision } : null;
    return err.status === 422 ? null : last;
  }).then((fc) => {
    if (card.forecastKey !== key) return; // another precision meanwhile
    card.forecast = fc;
    card.forecastAt = new Map();
    if (fc) for (const p of fc.history.concat(fc.forecast)) card.forecastAt.set(p.time, p);
    apply(card);
  });
}

const has = (x) => typeof x === 'number';

// forecastData is what the forecast changes in a chart: every band, the
// expected line, the marks, the shaded future, the highlighted bucket and
// the window of the alert last clicked.
export function forecastData(card) {
  const fc = card.forecast;
  const width = card.precision || 1;
  const scale = card.mode === 'rate' ? (v) => v / width : (v) => v;
  const lo95 = [], band95 = [], lo80 = [], band80 = [], expected = [], marks = [];
  if (fc) {
    for (const p of fc.history.concat(fc.forecast)) {
      const t = p.time * 1000;
      const ok95 = has(p.lo95) && has(p.hi95), ok80 = has(p.lo80) && has(p.hi80);
      lo95.push([t, ok95 ? scale(Math.max(0, p.lo95)) : null]);
      band95.push([t, ok95 ? scale(p.hi95 - Math.max(0, p.lo95)) : null]);
      lo80.push([t, ok80 ? scale(Math.max(0, p.lo80)) : null]);
      band80.push([t, ok80 ? scale(p.hi80 - Math.max(0, p.lo80)) : null]);
      expected.push([t, has(p.expected) ? scale(p.expected) : null]);
      if (p.anomaly && has(p.value)) marks.push({ value: [t, scale(p.value)], kind: p.anomaly.kind });
    }
  }
  const areas = [];
  if (fc && card.current) {
    areas.push([{ xAxis: card.current * 1000, itemStyle: { color: color.future } }, { xAxis: (card.current + horizon * width) * 1000 }]);
  }
  if (card.highlight) {
    const half = (width * 1000) / 2;
    areas.push([{ xAxis: card.highlight * 1000 - half, itemStyle: { color: color.highlight } }, { xAxis: card.highlight * 1000 + half }]);
  }
  const alertArea = card.mark && windowArea(card, card.mark);
  if (alertArea) areas.push(alertArea);
  return [
    { id: 'lo95', data: lo95 }, { id: 'band95', data: band95 }, { id: 'lo80', data: lo80 }, { id: 'band80', data: band80 },
    { id: 'expected', data: expected, markArea: { silent: true, data: areas } },
    {
      id: 'anomalies', data: marks,
      markLine: {
        silent: true, symbol: 'none', label: { show: false }, lineStyle: { color: color.anomaly, width: 1.5, type: 'solid' },
        data: card.highlight ? [{ xAxis: card.highlight * 1000 }] : [],
      },
    },
  ];
}

function valueText(card, v) {
  const width = card.precision || 1;
  return card.mode === 'rate' ? rateFormat.format(v / width) : numberFormat.format(Math.round(v));
}

// forecastText is the tooltip's lines for bucket t (unix seconds): what
// was expected, its 80 % band and, on a flagged bucket, the flag.
export function forecastText(card, t) {
  const p = card.forecastAt && card.forecastAt.get(t);
  if (!p || !has(p.expected)) return '';
  let text = '\nexpected ' + valueText(card, p.expected);
  if (has(p.lo80) && has(p.hi80)) {
    text += ' (80 %: ' + valueText(card, Math.max(0, p.lo80)) + '–' + valueText(card, p.hi80) + ')';
  }
  if (p.anomaly) {
    text += '\n⚠ anomaly: ' + kindName(p.anomaly.kind, p.anomaly.direction);
    if (has(p.anomaly.score)) text += ', score ' + rateFormat.format(p.anomaly.score);
  }
  return text;
}
