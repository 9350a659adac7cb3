// Unique visitors of the series cfg.visitors.name (the middlewares'
// total of every request): the window's figure and hits per visitor in
// the status strip; per bucket, a line on that series' chart (charts.js).
//
// Visitors are kept at some precisions only, and only by a recorder set
// to keep them: the page says so in the strip, and asks the API only for
// what can be answered, so nothing fails where nothing is kept.

import { getJSON } from './api.js';
import { cfg } from './config.js';
import { byId, el } from './dom.js';
import { numberFormat, rateFormat } from './format.js';

// keptAt reports whether buckets of the given width keep visitors.
export function keptAt(seconds) {
  return cfg.visitors.precisions.includes(seconds);
}

function show(value, note, level) {
  const node = byId('visitors');
  node.replaceChildren(document.createTextNode(value));
  if (note) node.append(el('small', '', note));
  const stat = byId('stat-visitors');
  if (level) stat.dataset.level = level;
  else delete stat.dataset.level;
}

// render writes the strip's figure: the window's visitors, each counted
// once, and its hits per visitor.
function render(v) {
  const w = v.window;
  if (w.visitors === 0) {
    show('—', w.hits > 0 ? 'none recorded' : 'no traffic', 'quiet');
    return;
  }
  const each = w.hits / w.visitors;
  show(numberFormat.format(w.visitors), rateFormat.format(each) + (each === 1 ? ' hit' : ' hits') + ' per visitor', '');
}

// readVisitors reads the visitors of the window of precision p (an entry
// of cfg.precisions), given the overview's totals, and shows them; it
// returns the API's answer, or null when there is nothing to read.
export async function readVisitors(p, totals) {
  const name = cfg.visitors.name;
  if (!keptAt(p.seconds)) {
    const kept = cfg.precisions.filter((x) => keptAt(x.seconds)).map((x) => x.label);
    show('—', kept.length ? 'kept at ' + kept.join(', ') : 'not kept', 'quiet');
    return null;
  }
  if (!totals.some((t) => t.name === name)) {
    show('—', 'no ' + name + ' yet', 'quiet');
    return null;
  }
  const v = await getJSON('api/visitors/' + encodeURIComponent(name) + '?precision=' + p.seconds + '&last=' + p.last);
  render(v);
  return v;
}
