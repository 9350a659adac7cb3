// The view: which precision, which pinned series, which zoomed window and
// which values (count or rate) the page shows.
//
// The view lives in the page's URL, so it can be bookmarked and shared:
// ?precision=60&series=GET%20%2Fposts&from=…&to=…&mode=rate, where from
// and to (unix seconds) are the zoomed window. With no precision or
// series in the URL, the last choice made in this browser is used.
//
// Other modules read view and change it only through the functions here,
// which keep the URL and this browser's storage in step.

import { cfg } from './config.js';

const storePrefix = 'pulse:' + location.pathname + ':';

// load reads a choice this browser saved, or fallback.
export function load(key, fallback) {
  try {
    const v = localStorage.getItem(storePrefix + key);
    return v === null ? fallback : JSON.parse(v);
  } catch (e) {
    return fallback;
  }
}

// save keeps a choice for the next visit.
export function save(key, value) {
  try {
    localStorage.setItem(storePrefix + key, JSON.stringify(value));
  } catch (e) {
    // Private windows may refuse storage; the choice then lasts the visit.
  }
}

function readPrecision(query) {
  const precisions = cfg.precisions;
  const p = query.has('precision') ? Number(query.get('precision')) : load('precision', precisions[0].seconds);
  return precisions.some((x) => x.seconds === p) ? p : precisions[0].seconds;
}

function readPinned(query) {
  const pinned = query.has('series') ? query.getAll('series') : load('pinned', []);
  if (!Array.isArray(pinned)) return [];
  return pinned.filter((n) => typeof n === 'string' && n !== '').slice(0, cfg.maxPinned);
}

// readZoom is the zoomed window in unix seconds, or null for all of it.
function readZoom(query) {
  const from = Number(query.get('from'));
  const to = Number(query.get('to'));
  if (query.has('from') && query.has('to') && Number.isFinite(from) && Number.isFinite(to) && from < to) {
    return { from: from, to: to };
  }
  return null;
}

const query = new URLSearchParams(location.search);

// view is the current view. zoom is { from, to } in unix seconds, or null
// for the whole window.
export const view = {
  precision: readPrecision(query),
  pinned: readPinned(query),
  mode: query.get('mode') === 'rate' ? 'rate' : 'count',
  zoom: readZoom(query),
};

// writeURL puts the view into the address bar without a reload.
export function writeURL() {
  const q = new URLSearchParams();
  q.set('precision', String(view.precision));
  for (const name of view.pinned) q.append('series', name);
  if (view.zoom) {
    q.set('from', String(Math.floor(view.zoom.from)));
    q.set('to', String(Math.ceil(view.zoom.to)));
  }
  if (view.mode === 'rate') q.set('mode', 'rate');
  const next = '?' + q.toString();
  if (next !== location.search) history.replaceState(null, '', next + location.hash);
}

// precisionView is the configured precision of the given width.
export function precisionView(seconds) {
  return cfg.precisions.find((x) => x.seconds === seconds);
}

// setPrecision switches the bucket width; another width is another window
// altogether, so the zoom is dropped.
export function setPrecision(seconds) {
  if (seconds !== view.precision) view.zoom = null;
  view.precision = seconds;
  save('precision', seconds);
  writeURL();
}

export function setMode(mode) {
  view.mode = mode === 'rate' ? 'rate' : 'count';
  writeURL();
}

export function setZoom(zoom) {
  view.zoom = zoom;
  writeURL();
}

export function isPinned(name) {
  return view.pinned.includes(name);
}

// togglePinned pins a series, dropping the oldest pin past cfg.maxPinned,
// or unpins it.
export function togglePinned(name) {
  const i = view.pinned.indexOf(name);
  if (i >= 0) {
    view.pinned.splice(i, 1);
  } else {
    if (view.pinned.length >= cfg.maxPinned) view.pinned.shift();
    view.pinned.push(name);
  }
  save('pinned', view.pinned);
  writeURL();
}
