// The status strip (the recorder's health) and the live indicator with
// its notice when updates fail.

import { pollSeconds } from './config.js';
import { byId, el } from './dom.js';
import { ago, clockFormat, numberFormat } from './format.js';

let lastSuccess = null; // when a poll last succeeded

function setStat(id, level) {
  const node = byId(id);
  if (level) node.dataset.level = level;
  else delete node.dataset.level;
}

function renderLastFlush(lastFlush, now) {
  const flushed = Date.parse(lastFlush);
  const node = byId('last-flush');
  if (!lastFlush || isNaN(flushed) || flushed <= 0) {
    node.textContent = 'never';
    return;
  }
  node.replaceChildren(
    document.createTextNode(ago(now - flushed / 1000)),
    el('small', '', clockFormat.format(new Date(flushed))),
  );
}

function renderHealthNote(h) {
  const note = byId('health-note');
  if (h.ok !== false) {
    note.hidden = true;
    return;
  }
  const at = Date.parse(h.last_error_at);
  note.textContent = 'Not recording: ' + h.problem +
    (!h.redis_up && !isNaN(at) && at > 0 ? ' (last flush error at ' + clockFormat.format(new Date(at)) + '; the app\'s log has the details)' : '') + '.';
  note.hidden = false;
}

// renderHealth shows api/health's answer; now is the store's clock in
// unix seconds.
export function renderHealth(h, now) {
  byId('redis-state').textContent = h.redis_up ? 'up' : 'down';
  setStat('stat-redis', h.redis_up ? 'ok' : 'bad');
  renderLastFlush(h.last_flush, now);
  byId('pending-hits').textContent = numberFormat.format(h.pending_hits);
  byId('dropped-hits').textContent = numberFormat.format(h.dropped_hits);
  setStat('stat-dropped', h.dropped_hits > 0 ? 'bad' : '');
  byId('series-count').textContent = numberFormat.format(h.series);
  byId('overflow-names').textContent = numberFormat.format(h.overflow_names);
  setStat('stat-overflow', h.overflow_names > 0 ? 'warn' : '');
  renderHealthNote(h);
}

// renderNoHealth fills the strip when no Health is configured.
export function renderNoHealth() {
  for (const id of ['redis-state', 'last-flush', 'pending-hits', 'dropped-hits', 'series-count', 'overflow-names']) {
    byId(id).textContent = '—';
  }
  const note = byId('health-note');
  note.textContent = 'No recorder health is configured for this dashboard.';
  note.hidden = false;
}

// setLive shows whether the last poll succeeded; on failure the notice
// says why and since when the data is old.
export function setLive(ok, err) {
  const live = byId('live');
  const notice = byId('notice');
  if (ok) {
    lastSuccess = new Date();
    live.dataset.state = 'ok';
    byId('live-text').textContent = 'Live · updated ' + clockFormat.format(lastSuccess);
    notice.hidden = true;
    notice.textContent = '';
    return;
  }
  live.dataset.state = 'error';
  byId('live-text').textContent = 'Not updating';
  const since = lastSuccess ? 'Showing data from ' + clockFormat.format(lastSuccess) + '. ' : '';
  notice.textContent = 'Live updates paused: ' + err.message + '. ' + since +
    'Retrying every ' + pollSeconds + ' s.';
  notice.hidden = false;
}
