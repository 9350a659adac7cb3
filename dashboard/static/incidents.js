// The incident history: every incident kept in the last 24 h, 7 d or
// 30 d, at every precision, newest end first, read from api/incidents
// when the range changes and every refreshSeconds. A row still inside
// its precision's window pins its root series at that precision with
// its worst bucket highlighted (main.js listens); an older one is shown,
// not pinned: its buckets are gone.

import { getJSON } from './api.js';
import { byId, el } from './dom.js';
import { kindName } from './forecast.js';
import { bucketLabel, numberFormat, rateFormat } from './format.js';

const refreshSeconds = 30;
const listLimit = 200;
const arrows = { up: '↑', down: '↓' };
let range = 86400;
let reading = 0;

function precisionLabel(seconds) {
  if (seconds % 86400 === 0) return seconds / 86400 + ' d';
  if (seconds % 3600 === 0) return seconds / 3600 + ' h';
  if (seconds % 60 === 0) return seconds / 60 + ' min';
  return seconds + ' s';
}

const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

// dayOf is the day of an incident not from the last 24 h, for a list
// that reaches back 30 days; '' for a recent one.
function dayOf(seconds) {
  return Date.now() / 1000 - seconds > 86400 ? dayFormat.format(new Date(seconds * 1000)) + ' ' : '';
}

function incidentItem(inc) {
  const button = el('button', 'anomaly-item incident-item');
  button.type = 'button';
  button.dataset.series = inc.series;
  button.dataset.bucket = String(inc.peak);
  button.dataset.precision = String(inc.precision);
  button.dataset.inWindow = String(inc.in_window);
  const what = kindName(inc.kind, inc.direction) + ' ' + (arrows[inc.direction] || '');
  const when = dayOf(inc.start) + bucketLabel(inc.start, inc.precision) + (inc.open ? ' – now' : inc.end > inc.start ? ' – ' + bucketLabel(inc.end, inc.precision) : '');
  const score = typeof inc.score === 'number' ? ' · score ' + rateFormat.format(inc.score) : '';
  const observed = typeof inc.observed === 'number' ? numberFormat.format(Math.round(inc.observed)) : '–';
  const expected = typeof inc.expected === 'number' ? numberFormat.format(Math.round(inc.expected)) : '–';
  button.title = inc.series + ': ' + what + ', ' + when + (inc.in_window ? '' : ' (its buckets have left the chart)');
  button.append(
    el('span', 'anomaly-kind', what),
    el('span', 'anomaly-time', when + ' · ' + precisionLabel(inc.precision)),
    el('span', 'anomaly-series', inc.series),
    el('span', 'anomaly-detail', observed + ' at its worst, expected ' + expected + score),
  );
  if (inc.related && inc.related.length) {
    button.append(el('span', 'anomaly-related', 'with ' + inc.related.map((r) => r.series).join(', ')));
  }
  const li = el('li');
  li.append(button);
  return li;
}

// refreshIncidents reads the history of the chosen range.
export async function refreshIncidents() {
  const mine = ++reading;
  // within, not since: the range counts back from the server's clock.
  const answer = await getJSON('api/incidents?within=' + range + '&limit=' + listLimit);
  if (mine !== reading) return; // another range meanwhile
  const list = answer.incidents || [];
  byId('incident-count').textContent = '(' + numberFormat.format(answer.total || 0) + ')';
  byId('incident-list').replaceChildren(...list.map(incidentItem));
  byId('incident-empty').hidden = list.length > 0;
}

// watchIncidents reads the history now and every refreshSeconds, and
// again when the range changes; onPick gets a row inside its window:
// { series, bucket, precision }.
export function watchIncidents(onPick) {
  const read = () => refreshIncidents().catch(() => {});
  for (const b of byId('incident-range').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      range = Number(b.dataset.range);
      for (const o of byId('incident-range').querySelectorAll('button')) o.setAttribute('aria-pressed', String(o === b));
      read();
    });
  }
  byId('incident-list').addEventListener('click', (ev) => {
    const item = ev.target.closest('.incident-item');
    if (!item || item.dataset.inWindow !== 'true') return;
    onPick({ series: item.dataset.series, bucket: Number(item.dataset.bucket), precision: Number(item.dataset.precision) });
  });
  read();
  setInterval(read, refreshSeconds * 1000);
}
