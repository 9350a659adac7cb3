// The alert banner: the firing and pending alerts of api/alerts (what
// dashboard.Config.Alerts serves, the alert package's evaluator) at the
// top of the page, and their count in the header. Clicking one charts its
// series at a precision that holds the window its value was read over,
// with that window marked (main.js listens; forecast.js draws the mark).
//
// Rule names and labels are the app's data: they reach the page only as
// text (dom.js).

import { getJSON } from './api.js';
import { cfg } from './config.js';
import { byId, el } from './dom.js';
import { parseWindow, spanText, valueText } from './alertvalue.js';
import { ago, clockFormat } from './format.js';

const shownStates = ['firing', 'pending'];
const windowColor = 'rgba(234, 88, 12, 0.14)';

const unixSeconds = (iso) => {
  const ms = Date.parse(iso);
  return isNaN(ms) ? 0 : ms / 1000;
};

// activeAlerts lists the firing alerts, then the pending ones, the
// longest-standing first within each, each with its rule.
function activeAlerts(answer) {
  const out = [];
  for (const rule of Array.isArray(answer.rules) ? answer.rules : []) {
    for (const a of Array.isArray(rule.alerts) ? rule.alerts : []) {
      if (shownStates.includes(a.state)) out.push({ ...a, ruleOf: rule });
    }
  }
  out.sort((a, b) => shownStates.indexOf(a.state) - shownStates.indexOf(b.state) || unixSeconds(a.since) - unixSeconds(b.since));
  return out;
}

function alertItem(a, now) {
  const labels = a.labels && typeof a.labels === 'object' ? a.labels : {};
  const since = unixSeconds(a.since);
  const slo = a.ruleOf.kind === 'availability' || a.ruleOf.kind === 'latency'; // its value names its severity
  const item = el(a.series ? 'button' : 'div', 'alert-item');
  item.dataset.state = a.state;
  if (a.series) {
    item.type = 'button';
    item.dataset.series = a.series;
    item.dataset.since = String(since);
    item.dataset.window = String(parseWindow(a.window));
    item.title = 'Chart ' + a.series + (a.window ? ' with the ' + spanText(parseWindow(a.window)) + ' window marked' : '');
  }
  const sinceText = since ? clockFormat.format(new Date(since * 1000)) + ' (' + ago(now - since) + ')' : '–';
  item.append(
    el('span', 'alert-state', a.state),
    el('span', 'alert-name', a.rule || labels.alertname || ''),
    el('span', 'alert-route', labels.route || a.series || labels.instance || ''),
    el('span', 'alert-value', valueText(a, a.ruleOf) + (labels.severity && !slo ? ' · ' + labels.severity : '') +
      (a.stale ? ' · data missing, held' : '') + (a.resolve_held ? ' · resolve held: ' + a.resolve_held : '')),
    el('span', 'alert-since', 'since ' + sinceText),
  );
  const li = el('li');
  li.append(item);
  return li;
}

// render shows alerts; none hides the banner and the header's count.
function render(alerts, now) {
  byId('alerts').hidden = alerts.length === 0;
  byId('alert-list').replaceChildren(...alerts.map((a) => alertItem(a, now)));
  const count = byId('alert-count');
  count.hidden = alerts.length === 0;
  count.textContent = alerts.length + (alerts.length === 1 ? ' alert' : ' alerts');
  count.dataset.state = alerts.some((a) => a.state === 'firing') ? 'firing' : 'pending';
}

// refreshAlerts reads api/alerts; nowJob resolves to the store's clock
// in unix seconds. With Redis down it still answers, with this
// instance's health alerts (PulseRedisDown among them). A 404 (none
// configured) or a 503 (an older server) hides the banner rather than
// failing the poll: alerts are an extra here.
export async function refreshAlerts(nowJob) {
  let answer;
  try {
    answer = await getJSON('api/alerts?transitions=0');
  } catch (err) {
    if (err.status === 404 || err.status === 503) {
      render([], 0);
      return;
    }
    throw err;
  }
  render(activeAlerts(answer), await nowJob);
}

// alertOf is the alert a click landed on, or null: its series, since
// (unix seconds) and window (seconds, 0 when it has none).
export function alertOf(target) {
  const item = target.closest('.alert-item[data-series]');
  if (!item) return null;
  for (const b of byId('alert-list').querySelectorAll('.alert-item')) b.setAttribute('aria-current', String(b === item));
  return { series: item.dataset.series, since: Number(item.dataset.since), window: Number(item.dataset.window) };
}

// precisionFor is the finest precision whose charted window holds
// seconds, else the widest.
export function precisionFor(seconds) {
  const ps = cfg.precisions.slice().sort((a, b) => a.seconds - b.seconds);
  return (ps.find((p) => p.seconds * p.last >= seconds) || ps[ps.length - 1]).seconds;
}

// windowArea is the markArea of an alert's window on card's chart: the
// window ending with the open bucket, or from since when it has none.
export function windowArea(card, mark) {
  const to = card.current + (card.precision || 1);
  const from = mark.window > 0 ? to - mark.window : mark.since;
  if (!(from < to)) return null;
  return [{ xAxis: from * 1000, itemStyle: { color: windowColor } }, { xAxis: to * 1000 }];
}
