// Pulse dashboard: the page's entry module. It wires the controls to the
// view (state.js) and starts polling (poll.js).
//
//	config.js   the server's JSON configuration
//	state.js    the view (precision, pins, zoom, mode) and the URL
//	api.js      reading the JSON API
//	poll.js     polling and updating in place
//	options.js  every echarts option
//	charts.js   the chart cards, shared zoom and crosshair
//	finder.js   the list of every series
//	status.js   the status strip and the live indicator
//	visitors.js unique visitors: the strip's figure, the line's data
//	entities.js the entity panel
//	red.js      the routes' RED table and durations chart
//	forecast.js each chart's expected line, bands and anomaly marks
//	anomalies.js the list of anomalies
//	alerts.js   the alert banner and the header's count
//	format.js   numbers and times; dom.js: DOM helpers

import { alertOf, precisionFor } from './alerts.js';
import { flagOf } from './anomalies.js';
import { watchIncidents } from './incidents.js';
import { focusBucket, focusWindow, resetZoom, resizeCharts } from './charts.js';
import { cfg, pollSeconds } from './config.js';
import { byId } from './dom.js';
import { chooseField, chooseKind, lookupEntity } from './entities.js';
import { renderFinder } from './finder.js';
import { timeZone } from './format.js';
import { poll } from './poll.js';
import { watchRoutes } from './red.js';
import { isPinned, setMode, setPrecision, togglePinned, view, writeURL } from './state.js';
import { renderNoHealth } from './status.js';

function markPrecision() {
  for (const b of byId('precisions').querySelectorAll('button')) {
    b.setAttribute('aria-pressed', String(Number(b.dataset.precision) === view.precision));
  }
}

function markMode() {
  for (const b of byId('modes').querySelectorAll('button')) {
    b.setAttribute('aria-pressed', String(b.dataset.mode === view.mode));
  }
}

function togglePin(name) {
  togglePinned(name);
  renderFinder();
  poll();
}

function watchViewControls() {
  for (const b of byId('precisions').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      setPrecision(Number(b.dataset.precision));
      byId('reset-zoom').hidden = !view.zoom;
      markPrecision();
      poll();
    });
  }
  for (const b of byId('modes').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      setMode(b.dataset.mode);
      markMode();
      poll();
    });
  }
  byId('reset-zoom').addEventListener('click', resetZoom);
}

// watchPins pins or unpins a series from a card's star or the list.
function watchPins() {
  byId('chart-grid').addEventListener('click', (ev) => {
    const pin = ev.target.closest('.card .pin');
    if (pin) togglePin(pin.closest('.card').dataset.series);
  });
  byId('series-list').addEventListener('click', (ev) => {
    const item = ev.target.closest('.series-item');
    if (item) togglePin(item.dataset.series);
  });
  byId('series-search').addEventListener('input', renderFinder);
  // An anomaly pins its series (never unpins it) at the flagged bucket.
  byId('anomaly-list').addEventListener('click', (ev) => {
    const flag = flagOf(ev.target);
    if (!flag) return;
    if (!isPinned(flag.series)) {
      togglePinned(flag.series);
      renderFinder();
    }
    focusBucket(flag.series, flag.bucket);
    poll();
  });
}

// watchAlerts: an alert pins its series (never unpins it) at a precision
// that holds its window, and marks the window.
function watchAlerts() {
  byId('alert-list').addEventListener('click', (ev) => {
    const picked = alertOf(ev.target);
    if (!picked) return;
    const precision = precisionFor(picked.window);
    if (precision !== view.precision) {
      setPrecision(precision);
      byId('reset-zoom').hidden = !view.zoom;
      markPrecision();
    }
    if (!isPinned(picked.series)) {
      togglePinned(picked.series);
      renderFinder();
    }
    focusWindow(picked.series, { since: picked.since, window: picked.window });
    poll();
  });
}

// pickIncident pins a kept incident's series at its precision, its worst
// bucket highlighted.
function pickIncident(inc) {
  if (inc.precision !== view.precision) {
    setPrecision(inc.precision);
    byId('reset-zoom').hidden = !view.zoom;
    markPrecision();
  }
  if (!isPinned(inc.series)) {
    togglePinned(inc.series);
    renderFinder();
  }
  focusBucket(inc.series, inc.bucket);
  poll();
}

function watchEntities() {
  byId('entity-kind').addEventListener('change', (ev) => {
    chooseKind(ev.target.value);
    poll();
  });
  byId('entity-field').addEventListener('change', (ev) => {
    chooseField(ev.target.value);
    poll();
  });
  byId('entity-lookup').addEventListener('submit', lookupEntity);
}

watchViewControls();
watchPins();
watchRoutes(poll);
if (cfg.entities) watchEntities();
if (cfg.alerts) watchAlerts();
watchIncidents(pickIncident);
byId('reset-zoom').hidden = !view.zoom;
markPrecision();
markMode();
writeURL();
if (!cfg.health) renderNoHealth();
byId('footer').textContent = 'Times are shown in ' + timeZone + '. The page refreshes every ' +
  pollSeconds + ' s without reloading.';
window.addEventListener('resize', resizeCharts);
poll();
