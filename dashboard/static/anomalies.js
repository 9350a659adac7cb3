// The anomalies list: every flag of the charts' window across all series,
// newest first, read from api/anomalies at most once per closed bucket of
// the precision (a flag is only ever raised on a closed bucket). Clicking
// one pins its series and highlights the bucket (main.js listens). The
// RED table marks the flagged routes from the same answer.

import { getJSON } from './api.js';
import { byId, el } from './dom.js';
import { kindName } from './forecast.js';
import { bucketLabel, numberFormat, rateFormat } from './format.js';
import { setRouteFlags } from './red.js';

const listLimit = 100;
let readKey = '';
let chosen = ''; // series and bucket of the entry last clicked

function flagItem(f) {
  const button = el('button', 'anomaly-item');
  button.type = 'button';
  button.dataset.series = f.series;
  button.dataset.bucket = String(f.bucket);
  button.dataset.kind = f.kind;
  button.setAttribute('aria-current', String(chosen === f.series + '@' + f.bucket));
  button.title = f.series + ': ' + kindName(f.kind) + ' in the bucket of ' + bucketLabel(f.bucket, f.precision);
  const observed = typeof f.observed === 'number' ? numberFormat.format(Math.round(f.observed)) : '–';
  const expected = typeof f.expected === 'number' ? numberFormat.format(Math.round(f.expected)) : '–';
  const detail = observed + ' in the bucket, expected ' + expected + (typeof f.score === 'number' ? ' · score ' + rateFormat.format(f.score) : '');
  button.append(
    el('span', 'anomaly-kind', kindName(f.kind)),
    el('span', 'anomaly-time', bucketLabel(f.bucket, f.precision)),
    el('span', 'anomaly-series', f.series),
    el('span', 'anomaly-detail', detail),
  );
  const li = el('li');
  li.append(button);
  return li;
}

function renderList(flags) {
  byId('anomaly-count').textContent = '(' + numberFormat.format(flags.length) + ')';
  byId('anomaly-list').replaceChildren(...flags.slice(0, listLimit).map(flagItem));
  const note = byId('anomaly-empty');
  note.hidden = flags.length > 0;
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
  renderList(answer.anomalies);
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
