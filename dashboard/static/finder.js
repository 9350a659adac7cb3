// The searchable list of every series with its total over the window.
// Clicking one pins it (main.js listens on the list).

import { byId, el } from './dom.js';
import { numberFormat } from './format.js';
import { isPinned } from './state.js';

const listLimit = 200;
let totals = []; // [{name, total}] of the last overview

export function setTotals(next) {
  totals = next;
}

function seriesItem(t) {
  const pinned = isPinned(t.name);
  const button = el('button', 'series-item');
  button.type = 'button';
  button.title = t.name;
  button.dataset.series = t.name;
  button.setAttribute('aria-pressed', String(pinned));
  button.append(el('span', 'star', pinned ? '★' : ''), el('span', 'name', t.name), el('span', 'total', numberFormat.format(t.total)));
  const li = el('li');
  li.append(button);
  return li;
}

// renderFinder lists the series matching the search box.
export function renderFinder() {
  const query = byId('series-search').value.trim().toLowerCase();
  const matches = query ? totals.filter((t) => t.name.toLowerCase().includes(query)) : totals;
  byId('finder-count').textContent = '(' + numberFormat.format(totals.length) + ')';
  const frag = document.createDocumentFragment();
  for (const t of matches.slice(0, listLimit)) frag.append(seriesItem(t));
  byId('series-list').replaceChildren(frag);
  const more = byId('finder-more');
  if (matches.length > listLimit) {
    more.textContent = numberFormat.format(matches.length - listLimit) + ' more: type to narrow the list.';
    more.hidden = false;
  } else if (matches.length === 0) {
    more.textContent = totals.length ? 'No series matches.' : 'No series recorded at this precision yet.';
    more.hidden = false;
  } else {
    more.hidden = true;
  }
}
