// What an alert's value is, in words: api/alerts gives numbers (an SLO's
// burn rate, an absence's count, a health check's reading) and its rule
// says what they measure (kind, target, latency threshold, check).

import { rateFormat } from './format.js';

// durationUnits are the units of the alert package's durations ("3d",
// "1h30m", "250ms"), and of Go's time.Duration text, in seconds.
const durationUnits = { d: 86400, h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, 'µs': 1e-6, ns: 1e-9 };

// parseWindow reads a window such as "1h30m" or "3d" in seconds; 0 when
// there is none or it does not parse.
export function parseWindow(text) {
  if (typeof text !== 'string' || text === '') return 0;
  let seconds = 0;
  let rest = text;
  const part = /^([0-9]+(?:\.[0-9]+)?)(ms|us|µs|ns|d|h|m|s)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m) return 0;
    seconds += Number(m[1]) * durationUnits[m[2]];
    rest = rest.slice(m[0].length);
  }
  return seconds;
}

const number = (v) => (typeof v === 'number' && isFinite(v) ? rateFormat.format(v) : '–');

// spanText writes seconds as the alert package writes durations, the
// largest unit first and zero units left out: "250ms", "5m", "1h30m",
// "3d". Fractions of a millisecond are rounded.
export function spanText(seconds) {
  if (!(seconds > 0)) return '–';
  let ms = Math.round(seconds * 1000);
  let out = '';
  for (const [unit, size] of [['d', 86400000], ['h', 3600000], ['m', 60000], ['s', 1000], ['ms', 1]]) {
    const n = Math.floor(ms / size);
    if (n > 0) {
      out += n + unit;
      ms -= n * size;
    }
  }
  return out || '0s';
}

// measured is a value with its unit: "3 drops", "45s", "0 requests".
function measured(v, unit) {
  if (unit === 's') return spanText(v) === '–' ? '0s' : spanText(v);
  return number(v) + (unit ? ' ' + unit : '');
}

// severityAt says what an SLO's severity does at its burn rate.
function severityAt(severity) {
  if (severity === 'page') return 'pages at';
  if (severity === 'ticket') return 'opens a ticket at';
  return (severity || 'fires') + ' at';
}

// windowsText names the window pair an SLO's value was read over.
function windowsText(a) {
  const long = parseWindow(a.window);
  const short = parseWindow(a.short_window);
  if (!long) return '';
  return ' over ' + spanText(long) + (short ? ' and ' + spanText(short) : '');
}

// sloText: "burn rate 24× (pages at 14.4×)" with the share of bad
// requests the burn rate stands for; a latency SLO says which requests
// are bad: "p99 > 250 ms for 3.1 % of requests".
function sloText(a, rule, severity) {
  const burn = 'burn rate ' + number(a.value) + '× (' + severityAt(severity) + ' ' + number(a.threshold) + '×)';
  const target = typeof rule.target === 'number' ? rule.target : NaN;
  const share = number(a.value * (100 - target));
  if (!(target > 0 && target < 100)) return burn + windowsText(a);
  if (rule.kind === 'latency') {
    return 'p' + number(target) + ' > ' + spanText(parseWindow(rule.threshold)) + ' for ' + share + ' % of requests' +
      windowsText(a) + ' · ' + burn;
  }
  return burn + ' · ' + share + ' % errors' + windowsText(a);
}

// healthText reads a health check's value, with its unit and limit.
function healthText(a, rule) {
  const over = a.window ? ' over ' + spanText(parseWindow(a.window)) : '';
  const lasting = rule.for ? ', for ' + spanText(parseWindow(rule.for)) : '';
  switch (rule.check) {
    case 'redis_down':
      return 'last good flush ' + measured(a.value, a.unit) + ' ago, the latest failed: Redis unreachable (limit: a failed flush' +
        lasting + ')';
    case 'dropped':
      return measured(a.value, a.unit || 'drops') + over + ' (limit ' + measured(a.threshold, a.unit || 'drops') + ')';
    case 'flush_stalled':
      return 'last good flush ' + measured(a.value, 's') + ' ago (limit ' + measured(a.threshold, 's') + ')';
  }
  return measured(a.value, a.unit) + over + ' (limit ' + measured(a.threshold, a.unit) + ')';
}

// valueText says what a's value is, given its rule (kind, target,
// threshold, check as api/alerts lists them).
export function valueText(a, rule) {
  const labels = a.labels && typeof a.labels === 'object' ? a.labels : {};
  const notes = a.annotations && typeof a.annotations === 'object' ? a.annotations : {};
  switch (rule.kind) {
    case 'availability':
    case 'latency':
      return sloText(a, rule, labels.severity);
    case 'absence':
      return measured(a.value, a.unit || 'requests') + ' in the last ' + spanText(parseWindow(a.window)) +
        ' (limit 0, with a baseline of at least ' + measured(a.threshold, a.unit || 'requests') +
        (notes.baseline ? ': ' + notes.baseline : '') + ')';
    case 'health':
      return healthText(a, rule);
    case 'anomaly':
      return (notes.anomaly ? notes.anomaly.replace('_', ' ') + ': ' : '') + measured(a.value, a.unit || 'requests') +
        ' in ' + (a.window ? spanText(parseWindow(a.window)) : 'the minute') + ', beyond its band at ' +
        measured(a.threshold, a.unit || 'requests');
  }
  return measured(a.value, a.unit) + ' (limit ' + measured(a.threshold, a.unit) + ')';
}
