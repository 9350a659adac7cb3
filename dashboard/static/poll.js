// Polling: every cfg.pollMillis the page reads the overview, the
// visitors, the health, the entity top list and, once per closed bucket,
// the anomalies, and the alerts when configured (alerts.js), and updates
// in place. A
// failed poll keeps the last data and says so (status.js).

import { refreshAlerts } from './alerts.js';
import { refreshAnomalies } from './anomalies.js';
import { getJSON } from './api.js';
import { renderCharts } from './charts.js';
import { cfg } from './config.js';
import { refreshEntityTop } from './entities.js';
import { renderFinder, setTotals } from './finder.js';
import { refreshRoutes } from './red.js';
import { renderHealth, setLive } from './status.js';
import { precisionView, view } from './state.js';
import { readVisitors } from './visitors.js';

let pollTimer = 0;
let running = false;
let rerun = false;
// serverNow estimates the store's clock from the last overview, for
// "how long ago" when an overview fails.
let serverNow = { at: 0, value: 0 };

function overviewURL(p) {
  let url = 'api/overview?precision=' + p.seconds + '&last=' + p.last + '&n=' + cfg.overview;
  for (const name of view.pinned) url += '&series=' + encodeURIComponent(name);
  return url;
}

async function refresh() {
  const p = precisionView(view.precision);
  // api/health answers 503 with the same body when recording fails.
  const overviewJob = getJSON(overviewURL(p));
  // Visitors are read once the overview says whether their series exists.
  const jobs = [overviewJob, overviewJob.then((ov) => readVisitors(p, ov.totals))];
  jobs.push(cfg.health ? getJSON('api/health', [503]) : Promise.resolve(null));
  jobs.push(cfg.entities ? refreshEntityTop() : Promise.resolve(null), refreshRoutes(p));
  jobs.push(overviewJob.then((ov) => refreshAnomalies(p, ov.current)));
  // Alerts are read beside the overview, not after it: their own outage
  // (a 503) hides the banner even when the overview fails too.
  const nowJob = overviewJob.then((ov) => ov.now, () => serverNow.value + (Date.now() - serverNow.at) / 1000);
  jobs.push(cfg.alerts ? refreshAlerts(nowJob) : Promise.resolve(null));
  // Settle all: the health of the recorder matters most when the
  // series cannot be read.
  const [overview, visitors, health, top, routes, anomalies, alerts] = await Promise.allSettled(jobs);
  if (overview.status === 'fulfilled') {
    serverNow = { at: Date.now(), value: overview.value.now };
    if (p.seconds === view.precision) { // not switched meanwhile
      setTotals(overview.value.totals);
      renderCharts(overview.value, p, visitors.status === 'fulfilled' ? visitors.value : null);
      renderFinder();
    }
  }
  if (health.status === 'fulfilled' && health.value) {
    renderHealth(health.value, serverNow.value + (Date.now() - serverNow.at) / 1000);
  }
  for (const r of [overview, visitors, health, top, routes, anomalies, alerts]) {
    if (r && r.status === 'rejected') throw r.reason;
  }
}

// poll refreshes now and then every cfg.pollMillis; a call while a
// refresh runs makes one more run right after it.
export async function poll() {
  if (running) {
    rerun = true;
    return;
  }
  running = true;
  clearTimeout(pollTimer);
  try {
    await refresh();
    setLive(true);
  } catch (err) {
    setLive(false, err);
  }
  running = false;
  if (rerun) {
    rerun = false;
    poll();
    return;
  }
  pollTimer = setTimeout(poll, cfg.pollMillis);
}
