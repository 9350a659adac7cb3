// The anomalies list: every incident of the charts' window across all
// series, once, under its root series with the related ones that broke
// with it, newest first, read from api/anomalies at most once per closed
// bucket of the precision (a flag is only ever raised on a closed
// bucket). Clicking one pins its root series and highlights its worst
// bucket (main.js listens). The RED table marks the flagged routes from
// the same answer.

import { getJSON } from './api.js';
import { byId, el } from './dom.js';
import { kindName } from './forecast.js';
import { bucketLabel, numberFormat, rateFormat } from './format.js';
import { setRouteFlags } from './red.js';

const listLimit = 100;
let readKey = '';
let chosen = ''; // series and bucket of the entry last clicked

const arrows = { up: '↑', down: '↓' };

// eventItem is one incident, under its root series, with the related
// series that broke with it: clicking it pins the root at its peak.
function eventItem(e) {
  const button = el('button', 'anomaly-item');
  button.type = 'button';
  button.dataset.series = e.series;
  button.dataset.bucket = String(e.peak);
  button.dataset.kind = e.kind;
  button.dataset.direction = e.direction;
  button.setAttribute('aria-current', String(chosen === e.series + '@' + e.peak));
  const what = kindName(e.kind, e.direction) + ' ' + (arrows[e.direction] || '');
  const when = bucketLabel(e.start, e.precision) + (e.open ? ' – now' : e.end > e.start ? ' – ' + bucketLabel(e.end, e.precision) : '');
  button.title = e.series + ': ' + what + ', ' + when;
  const observed = typeof e.observed === 'number' ? numberFormat.format(Math.round(e.observed)) : '–';
  const expected = typeof e.expected === 'number' ? numberFormat.format(Math.round(e.expected)) : '–';
  const detail = observed + ' at its worst, expected ' + expected + (typeof e.score === 'number' ? ' · score ' + rateFormat.format(e.score) : '');
  button.append(
    el('span', 'anomaly-kind', what),
    el('span', 'anomaly-time', when),
    el('span', 'anomaly-series', e.series),
    el('span', 'anomaly-detail', detail),
  );
  if (e.related && e.related.length) {
    button.append(el('span', 'anomaly-related', 'with ' + e.related.map((r) => r.series).join(', ')));
  }
  const li = el('li');
  li.append(button);
  return li;
}

function renderList(events) {
  byId('anomaly-count').textContent = '(' + numberFormat.format(events.length) + ')';
  byId('anomaly-list').replaceChildren(...events.slice(0, listLimit).map(eventItem));
  const note = byId('anomaly-empty');
  note.hidden = events.length > 0;
}

// refreshAnomalies reads the flags of precision p (an entry of
// cfg.precisions) unless those of the closed bucket before current
// (unix seconds, the store's open bucket) were read already.
export async function refreshAnomalies(p, current) {
  const key = p.seconds + ':' + current;
  if (key === readKey) return;
  readKey = key;
  let answer;
  try {
    answer = await getJSON('api/anomalies?precision=' + p.seconds + '&last=' + p.last);
  } catch (err) {
    readKey = ''; // read again on the next poll
    throw err;
  }
  if (readKey !== key) return; // another precision meanwhile
  renderList(answer.events || []);
  setRouteFlags(answer.anomalies);
}

// flagOf is the list entry a click landed on, or null.
export function flagOf(target) {
  const item = target.closest('.anomaly-item');
  if (!item) return null;
  chosen = item.dataset.series + '@' + item.dataset.bucket;
  for (const b of byId('anomaly-list').querySelectorAll('.anomaly-item')) b.setAttribute('aria-current', String(b === item));
  return { series: item.dataset.series, bucket: Number(item.dataset.bucket) };
}
