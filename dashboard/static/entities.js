// The entity panel, shown only when the dashboard has Entities: the top
// entities of a kind by a field, and a lookup by id.

import { getJSON } from './api.js';
import { byId, el } from './dom.js';
import { numberFormat } from './format.js';
import { load, save } from './state.js';

// The kinds the API declares, and the kind and field chosen.
const entities = { kinds: null, kind: load('entityKind', ''), field: load('entityField', '') };

function fillSelect(select, values, chosen) {
  const frag = document.createDocumentFragment();
  for (const v of values) {
    const option = el('option', '', v);
    option.value = v;
    frag.append(option);
  }
  select.replaceChildren(frag);
  select.value = values.includes(chosen) ? chosen : (values[0] || '');
  return select.value;
}

// chooseKind shows the fields of a kind, keeping the chosen field when
// the kind has it.
export function chooseKind(kind) {
  const info = entities.kinds.find((k) => k.name === kind) || entities.kinds[0];
  entities.kind = info ? info.name : '';
  entities.field = fillSelect(byId('entity-field'), info ? info.fields : [], entities.field);
  save('entityKind', entities.kind);
  save('entityField', entities.field);
}

export function chooseField(field) {
  entities.field = field;
  save('entityField', entities.field);
}

async function loadKinds() {
  const data = await getJSON('api/entities');
  entities.kinds = data.kinds;
  entities.kind = fillSelect(byId('entity-kind'), data.kinds.map((k) => k.name), entities.kind);
  chooseKind(entities.kind);
}

function topItem(r, highest) {
  const li = el('li');
  const bar = el('span', 'bar');
  const fill = el('span');
  fill.style.width = (highest > 0 ? (100 * r.count) / highest : 0).toFixed(1) + '%';
  bar.append(fill);
  const name = r.label ? '"' + r.label + '" (#' + r.id + ')' : '#' + r.id;
  const label = el('span', 'id', name);
  label.title = name; // the whole name, where a long one is cut short
  li.append(label, bar, el('span', 'value', numberFormat.format(r.count)));
  return li;
}

// refreshEntityTop reads and shows the top 10 of the chosen kind by the
// chosen field; it runs with every poll.
export async function refreshEntityTop() {
  if (!entities.kinds) await loadKinds();
  const list = byId('entity-top');
  const empty = byId('entity-top-empty');
  if (!entities.kind || !entities.field) {
    list.replaceChildren();
    empty.textContent = 'No entity kinds are declared.';
    empty.hidden = false;
    return;
  }
  const data = await getJSON('api/entities/' + encodeURIComponent(entities.kind) + '/top?n=10&field=' + encodeURIComponent(entities.field));
  if (data.kind !== entities.kind || data.field !== entities.field) return; // the choice changed meanwhile
  const highest = data.top.reduce((m, r) => Math.max(m, r.count), 0);
  const frag = document.createDocumentFragment();
  for (const r of data.top) frag.append(topItem(r, highest));
  list.replaceChildren(frag);
  empty.textContent = 'Nothing counted yet.';
  empty.hidden = data.top.length > 0;
}

function countsTable(data) {
  const table = el('table');
  table.append(el('caption', '', data.kind + ' #' + data.id));
  const body = el('tbody');
  for (const [field, value] of Object.entries(data.counts)) {
    const tr = el('tr');
    tr.append(el('td', '', field), el('td', '', numberFormat.format(value)));
    body.append(tr);
  }
  table.append(body);
  return table;
}

// lookupEntity answers the lookup form: every count of one entity.
export async function lookupEntity(ev) {
  ev.preventDefault();
  const out = byId('entity-result');
  const id = byId('entity-id').value.trim();
  if (!/^-?\d{1,19}$/.test(id)) {
    out.replaceChildren(el('p', 'error', 'An id is a whole number.'));
    return;
  }
  if (!entities.kind) return;
  try {
    const data = await getJSON('api/entities/' + encodeURIComponent(entities.kind) + '/' + encodeURIComponent(id));
    out.replaceChildren(countsTable(data));
  } catch (err) {
    out.replaceChildren(el('p', 'error', 'Lookup failed: ' + err.message));
  }
}
