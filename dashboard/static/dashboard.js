// Pulse dashboard: polls the JSON API and updates the page in place.
//
// Series names and entity ids are data. They reach the page only through
// textContent, DOM properties and canvas text, never as HTML, so a name
// such as "<img src=x onerror=...>" shows as what it is.
(function () {
  'use strict';

  const cfg = JSON.parse(document.getElementById('pulse-config').textContent);
  const byId = (id) => document.getElementById(id);
  const hasEcharts = typeof window.echarts !== 'undefined';
  const storePrefix = 'pulse:' + location.pathname + ':';
  const numberFormat = new Intl.NumberFormat();
  const compactFormat = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
  const rateFormat = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 3 });
  const chartGroup = 'pulse';
  const timeZone = (Intl.DateTimeFormat().resolvedOptions().timeZone) || 'local time';
  // 24-hour times, as the chart axes show them.
  const clockFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  const minuteFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

  // el makes an element with a class and text content.
  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function load(key, fallback) {
    try {
      const v = localStorage.getItem(storePrefix + key);
      return v === null ? fallback : JSON.parse(v);
    } catch (e) {
      return fallback;
    }
  }

  function save(key, value) {
    try {
      localStorage.setItem(storePrefix + key, JSON.stringify(value));
    } catch (e) {
      // Private windows may refuse storage; the choice then lasts the visit.
    }
  }

  // ---- State ----
  //
  // The view lives in the page's URL, so it can be bookmarked and shared:
  // ?precision=60&series=GET%20%2Fposts&from=…&to=…&mode=rate, where from
  // and to (unix seconds) are the zoomed window. With no precision or
  // series in the URL, the last choice made in this browser is used.

  const precisions = cfg.precisions;
  const query = new URLSearchParams(location.search);
  let precision = query.has('precision') ? Number(query.get('precision')) : load('precision', precisions[0].seconds);
  if (!precisions.some((p) => p.seconds === precision)) precision = precisions[0].seconds;
  let pinned = query.has('series') ? query.getAll('series') : load('pinned', []);
  if (!Array.isArray(pinned)) pinned = [];
  pinned = pinned.filter((n) => typeof n === 'string' && n !== '').slice(0, cfg.maxPinned);
  let mode = query.get('mode') === 'rate' ? 'rate' : 'count';
  // zoom is the visible window in unix seconds, or null for all of it.
  let zoom = null;
  {
    const from = Number(query.get('from'));
    const to = Number(query.get('to'));
    if (query.has('from') && query.has('to') && Number.isFinite(from) && Number.isFinite(to) && from < to) zoom = { from: from, to: to };
  }

  // writeURL puts the view into the address bar without a reload.
  function writeURL() {
    const q = new URLSearchParams();
    q.set('precision', String(precision));
    for (const name of pinned) q.append('series', name);
    if (zoom) {
      q.set('from', String(Math.floor(zoom.from)));
      q.set('to', String(Math.ceil(zoom.to)));
    }
    if (mode === 'rate') q.set('mode', 'rate');
    const next = '?' + q.toString();
    if (next !== location.search) history.replaceState(null, '', next + location.hash);
  }

  const cards = new Map(); // series name -> card
  let totals = [];
  let lastSuccess = null;
  let pollTimer = 0;
  let running = false;
  let rerun = false;

  // ---- Fetching ----

  // getJSON fetches an API URL relative to the dashboard root and returns
  // its JSON, or throws an Error that says what went wrong.
  async function getJSON(url, okStatus) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), Math.max(10000, 2 * cfg.pollMillis));
    let res;
    try {
      res = await fetch(url, {
        headers: { Accept: 'application/json' },
        cache: 'no-store',
        credentials: 'same-origin',
        signal: ctl.signal,
      });
    } catch (e) {
      throw new Error(e && e.name === 'AbortError' ? 'the server did not answer in time' : 'the server cannot be reached');
    } finally {
      clearTimeout(timer);
    }
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      // Not JSON: a proxy's error page, say.
    }
    if (!res.ok && !(okStatus && okStatus.includes(res.status) && body !== null)) {
      const detail = body && typeof body.error === 'string' ? ': ' + body.error : '';
      const err = new Error('HTTP ' + res.status + detail);
      err.status = res.status;
      throw err;
    }
    if (body === null) throw new Error('the server answered with something other than JSON');
    return body;
  }

  // ---- Time and numbers ----

  function bucketLabel(seconds, width) {
    const d = new Date(seconds * 1000);
    if (width >= 86400) return d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
    if (width >= 3600) {
      return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    }
    if (width >= 60) return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    return clockFormat.format(d);
  }

  // axisTime labels a tick of the time axis: times of day for windows of
  // a day or two, with the date at midnight; dates for longer windows.
  function axisTime(ms, span) {
    const d = new Date(ms);
    const midnight = d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0;
    if (midnight) return dayFormat.format(d);
    if (span > 2 * 86400) return dayFormat.format(d) + ' ' + minuteFormat.format(d);
    return d.getSeconds() === 0 ? minuteFormat.format(d) : clockFormat.format(d);
  }

  function ago(seconds) {
    if (seconds < 1) return 'just now';
    if (seconds < 90) return Math.round(seconds) + ' s ago';
    if (seconds < 5400) return Math.round(seconds / 60) + ' min ago';
    if (seconds < 172800) return Math.round(seconds / 3600) + ' h ago';
    return Math.round(seconds / 86400) + ' d ago';
  }

  // ---- Charts ----

  function chartOption(card) {
    const option = JSON.parse(JSON.stringify(cfg.chart)); // built with go-echarts
    option.tooltip = Object.assign({}, option.tooltip, {
      // Drawn on the canvas, not as HTML.
      renderMode: 'richText',
      confine: true,
      formatter: (params) => {
        const list = Array.isArray(params) ? params : [params];
        if (!list.length) return '';
        // Both series hold the last complete bucket: take the last entry.
        const point = list[list.length - 1];
        const t = point.value[0] / 1000;
        const value = point.value[1];
        const width = card.precision;
        // The full name: a card's title may be cut short.
        let text = card.name + '\n' + bucketLabel(t, width);
        if (width < 3600) text += ' – ' + bucketLabel(t + width, width);
        if (card.mode === 'rate') {
          text += '\n' + rateFormat.format(value) + ' hits/s';
        } else {
          text += '\n' + numberFormat.format(value) + (value === 1 ? ' hit' : ' hits');
        }
        if (t === card.current) text += ' so far (still filling)';
        return text;
      },
    });
    const xAxis = Array.isArray(option.xAxis) ? option.xAxis[0] : option.xAxis;
    xAxis.axisLabel = Object.assign({}, xAxis.axisLabel, { formatter: (v) => axisTime(v, card.span) });
    const yAxis = Array.isArray(option.yAxis) ? option.yAxis[0] : option.yAxis;
    // Rates are often below one: keep their significant digits.
    yAxis.axisLabel = Object.assign({}, yAxis.axisLabel, {
      formatter: (v) => (card.mode === 'rate' && v < 1000 ? rateFormat.format(v) : compactFormat.format(v)),
    });
    // Wheel or pinch zooms, drag pans; every chart follows (echarts.connect).
    option.dataZoom = [Object.assign({ type: 'inside', xAxisIndex: 0, filterMode: 'none', zoomOnMouseWheel: true, moveOnMouseMove: true }, zoomWindow())];
    return option;
  }

  // zoomWindow is the dataZoom range of the current zoom.
  function zoomWindow() {
    if (!zoom) return { start: 0, end: 100 };
    return { startValue: zoom.from * 1000, endValue: zoom.to * 1000 };
  }

  // onZoom follows a zoom or pan of any chart: the other charts follow
  // through echarts.connect, the URL records the window.
  function onZoom(card) {
    const dz = card.chart.getOption().dataZoom;
    if (!dz || !dz.length) return;
    const z = dz[0];
    if (z.start <= 0 && z.end >= 100) {
      zoom = null;
    } else if (typeof z.startValue === 'number' && typeof z.endValue === 'number') {
      zoom = { from: z.startValue / 1000, to: z.endValue / 1000 };
    }
    byId('reset-zoom').hidden = !zoom;
    writeURL();
  }

  function resetZoom() {
    zoom = null;
    for (const card of cards.values()) {
      if (card.chart) card.chart.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
    }
    byId('reset-zoom').hidden = true;
    writeURL();
  }

  // splitSeries turns zero-filled samples into the solid line of complete
  // buckets and the dashed segment into the still-open one, whose hollow
  // dot marks only the open bucket.
  // In rate mode a count becomes hits per second: over the bucket's
  // width, and for the still-open bucket over the seconds it has run.
  function splitSeries(samples, current, width, now) {
    const perSecond = (s) => {
      if (mode !== 'rate') return s.count;
      const seconds = s.time === current ? Math.min(width, Math.max(1, now - current)) : width;
      return s.count / seconds;
    };
    const points = samples.map((s) => [s.time * 1000, perSecond(s)]);
    const n = points.length;
    if (n > 0 && samples[n - 1].time === current) {
      const partial = [points[n - 1]];
      if (n > 1) partial.unshift({ value: points[n - 2], symbol: 'none' });
      return { complete: points.slice(0, n - 1), partial: partial };
    }
    return { complete: points, partial: [] };
  }

  function makeCard(name) {
    const card = { name: name, chart: null, precision: 0, current: 0, span: 0, mode: mode };
    card.root = el('article', 'card');
    card.root.dataset.series = name;
    const head = el('div', 'card-head');
    card.title = el('h3', 'card-title', name);
    card.title.title = name;
    card.total = el('span', 'card-total');
    card.pin = el('button', 'pin');
    card.pin.type = 'button';
    card.pin.addEventListener('click', () => togglePin(name));
    head.append(card.title, card.total, card.pin);
    card.chartEl = el('div', 'chart');
    card.chartEl.setAttribute('role', 'img');
    card.chartEl.setAttribute('aria-label', 'Hits of ' + name + ' over time');
    card.chartEl.title = '';
    card.root.append(head, card.chartEl);
    return card;
  }

  function updateCard(card, series, overview, view, isPinned) {
    card.precision = overview.precision;
    card.current = overview.current;
    card.span = overview.to - overview.from + overview.precision;
    card.root.dataset.pinned = String(isPinned);
    card.pin.textContent = isPinned ? '★' : '☆';
    card.pin.title = isPinned ? 'Unpin this series' : 'Pin this series';
    card.pin.setAttribute('aria-pressed', String(isPinned));
    const strong = el('strong', '', numberFormat.format(series.total));
    card.total.replaceChildren(strong, document.createTextNode(' in ' + view.window));
    card.mode = mode;
    if (!hasEcharts) return;
    if (!card.chart) {
      card.chart = window.echarts.init(card.chartEl, null, { renderer: 'canvas' });
      card.chart.setOption(chartOption(card));
      card.chart.group = chartGroup;
      window.echarts.connect(chartGroup);
      card.chart.on('datazoom', () => onZoom(card));
      if (typeof ResizeObserver !== 'undefined') {
        card.resizer = new ResizeObserver(() => card.chart && card.chart.resize());
        card.resizer.observe(card.chartEl);
      }
    }
    const parts = splitSeries(series.samples, overview.current, overview.precision, overview.now);
    card.chart.setOption({
      xAxis: { min: overview.from * 1000, max: overview.to * 1000 },
      yAxis: { minInterval: mode === 'rate' ? 0 : 1 },
      dataZoom: [zoomWindow()],
      series: [
        { id: 'complete', data: parts.complete },
        { id: 'partial', data: parts.partial },
      ],
    });
  }

  function dropCard(card) {
    if (card.resizer) card.resizer.disconnect();
    if (card.chart) card.chart.dispose();
    card.root.remove();
  }

  function renderCharts(overview, view) {
    byId('window-label').textContent = 'last ' + view.window + ' in ' + view.label + ' buckets · ' +
      (mode === 'rate' ? 'hits per second' : 'hits per bucket') + ' · times in ' + timeZone;
    const wanted = [];
    for (const s of overview.pinned) wanted.push({ series: s, pinned: true });
    for (const s of overview.top) {
      if (!pinned.includes(s.name)) wanted.push({ series: s, pinned: false });
    }
    const keep = new Set(wanted.map((w) => w.series.name));
    for (const [name, card] of cards) {
      if (!keep.has(name)) {
        dropCard(card);
        cards.delete(name);
      }
    }
    const grid = byId('chart-grid');
    wanted.forEach((w, i) => {
      let card = cards.get(w.series.name);
      if (!card) {
        card = makeCard(w.series.name);
        cards.set(w.series.name, card);
      }
      if (grid.children[i] !== card.root) grid.insertBefore(card.root, grid.children[i] || null);
      updateCard(card, w.series, overview, view, w.pinned);
    });
    const empty = byId('charts-empty');
    if (!hasEcharts) {
      empty.textContent = 'Charts cannot be drawn: echarts did not load. Totals are still live.';
      empty.hidden = false;
      byId('assets-notice').hidden = false;
    } else {
      empty.textContent = 'No traffic in this window yet.';
      empty.hidden = wanted.length > 0;
    }
  }

  // ---- Series finder ----

  const listLimit = 200;

  function renderFinder() {
    const query = byId('series-search').value.trim().toLowerCase();
    const matches = query ? totals.filter((t) => t.name.toLowerCase().includes(query)) : totals;
    byId('finder-count').textContent = '(' + numberFormat.format(totals.length) + ')';
    const frag = document.createDocumentFragment();
    for (const t of matches.slice(0, listLimit)) {
      const isPinned = pinned.includes(t.name);
      const button = el('button', 'series-item');
      button.type = 'button';
      button.title = t.name;
      button.dataset.series = t.name;
      button.setAttribute('aria-pressed', String(isPinned));
      button.append(el('span', 'star', isPinned ? '★' : ''), el('span', 'name', t.name), el('span', 'total', numberFormat.format(t.total)));
      button.addEventListener('click', () => togglePin(t.name));
      const li = el('li');
      li.append(button);
      frag.append(li);
    }
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

  function togglePin(name) {
    const i = pinned.indexOf(name);
    if (i >= 0) {
      pinned.splice(i, 1);
    } else {
      if (pinned.length >= cfg.maxPinned) pinned.shift();
      pinned.push(name);
    }
    save('pinned', pinned);
    writeURL();
    renderFinder();
    poll();
  }

  // ---- Health ----

  function setStat(id, level) {
    const node = byId(id);
    if (level) node.dataset.level = level;
    else delete node.dataset.level;
  }

  function renderHealth(h, now) {
    const redis = byId('redis-state');
    redis.textContent = h.redis_up ? 'up' : 'down';
    setStat('stat-redis', h.redis_up ? 'ok' : 'bad');
    const flushed = Date.parse(h.last_flush);
    const lastFlush = byId('last-flush');
    if (!h.last_flush || isNaN(flushed) || flushed <= 0) {
      lastFlush.textContent = 'never';
    } else {
      lastFlush.replaceChildren(
        document.createTextNode(ago(now - flushed / 1000)),
        el('small', '', clockFormat.format(new Date(flushed))),
      );
    }
    byId('pending-hits').textContent = numberFormat.format(h.pending_hits);
    byId('dropped-hits').textContent = numberFormat.format(h.dropped_hits);
    setStat('stat-dropped', h.dropped_hits > 0 ? 'bad' : '');
    byId('series-count').textContent = numberFormat.format(h.series);
    byId('overflow-names').textContent = numberFormat.format(h.overflow_names);
    setStat('stat-overflow', h.overflow_names > 0 ? 'warn' : '');
    const note = byId('health-note');
    if (h.ok === false) {
      const at = Date.parse(h.last_error_at);
      note.textContent = 'Not recording: ' + h.problem +
        (!h.redis_up && !isNaN(at) && at > 0 ? ' (last flush error at ' + clockFormat.format(new Date(at)) + '; the app\'s log has the details)' : '') + '.';
      note.hidden = false;
    } else {
      note.hidden = true;
    }
  }

  function renderNoHealth() {
    for (const id of ['redis-state', 'last-flush', 'pending-hits', 'dropped-hits', 'series-count', 'overflow-names']) {
      byId(id).textContent = '—';
    }
    const note = byId('health-note');
    note.textContent = 'No recorder health is configured for this dashboard.';
    note.hidden = false;
  }

  // ---- Entities ----

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

  function chooseKind(kind) {
    const info = entities.kinds.find((k) => k.name === kind) || entities.kinds[0];
    entities.kind = info ? info.name : '';
    entities.field = fillSelect(byId('entity-field'), info ? info.fields : [], entities.field);
    save('entityKind', entities.kind);
    save('entityField', entities.field);
  }

  async function loadKinds() {
    const data = await getJSON('api/entities');
    entities.kinds = data.kinds;
    entities.kind = fillSelect(byId('entity-kind'), data.kinds.map((k) => k.name), entities.kind);
    chooseKind(entities.kind);
  }

  async function refreshEntityTop() {
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
    for (const r of data.top) {
      const li = el('li');
      const bar = el('span', 'bar');
      const fill = el('span');
      fill.style.width = (highest > 0 ? (100 * r.count) / highest : 0).toFixed(1) + '%';
      bar.append(fill);
      const name = r.label ? '"' + r.label + '" (#' + r.id + ')' : '#' + r.id;
      const label = el('span', 'id', name);
      label.title = name; // the whole name, where a long one is cut short
      li.append(label, bar, el('span', 'value', numberFormat.format(r.count)));
      frag.append(li);
    }
    list.replaceChildren(frag);
    empty.textContent = 'Nothing counted yet.';
    empty.hidden = data.top.length > 0;
  }

  async function lookupEntity(ev) {
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
      const table = el('table');
      table.append(el('caption', '', data.kind + ' #' + data.id));
      const body = el('tbody');
      for (const [field, value] of Object.entries(data.counts)) {
        const tr = el('tr');
        tr.append(el('td', '', field), el('td', '', numberFormat.format(value)));
        body.append(tr);
      }
      table.append(body);
      out.replaceChildren(table);
    } catch (err) {
      out.replaceChildren(el('p', 'error', 'Lookup failed: ' + err.message));
    }
  }

  // ---- Polling ----

  function setLive(ok, err) {
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
      'Retrying every ' + Math.round(cfg.pollMillis / 100) / 10 + ' s.';
    notice.hidden = false;
  }

  // serverNow estimates the store's clock from the last overview, for
  // "how long ago" when an overview fails.
  let serverNow = { at: 0, value: 0 };

  async function refresh() {
    const p = precision;
    const view = precisions.find((x) => x.seconds === p);
    let url = 'api/overview?precision=' + p + '&last=' + view.last + '&n=' + cfg.overview;
    for (const name of pinned) url += '&series=' + encodeURIComponent(name);
    // api/health answers 503 with the same body when recording fails.
    const jobs = [getJSON(url), cfg.health ? getJSON('api/health', [503]) : Promise.resolve(null)];
    if (cfg.entities) jobs.push(refreshEntityTop());
    // Settle all: the health of the recorder matters most when the
    // series cannot be read.
    const [overview, health, top] = await Promise.allSettled(jobs);
    if (overview.status === 'fulfilled') {
      serverNow = { at: Date.now(), value: overview.value.now };
      if (p === precision) { // not switched meanwhile
        totals = overview.value.totals;
        renderCharts(overview.value, view);
        renderFinder();
      }
    }
    if (health.status === 'fulfilled' && health.value) {
      renderHealth(health.value, serverNow.value + (Date.now() - serverNow.at) / 1000);
    }
    for (const r of [overview, health, top]) {
      if (r && r.status === 'rejected') throw r.reason;
    }
  }

  // poll refreshes now and then every PollInterval; a call while a refresh
  // runs makes one more run right after it.
  async function poll() {
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

  // ---- Start ----

  function markPrecision() {
    for (const b of byId('precisions').querySelectorAll('button')) {
      b.setAttribute('aria-pressed', String(Number(b.dataset.precision) === precision));
    }
  }

  function markMode() {
    for (const b of byId('modes').querySelectorAll('button')) {
      b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
    }
  }

  for (const b of byId('precisions').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      const next = Number(b.dataset.precision);
      if (next !== precision) zoom = null; // another window altogether
      precision = next;
      save('precision', precision);
      byId('reset-zoom').hidden = !zoom;
      writeURL();
      markPrecision();
      poll();
    });
  }
  for (const b of byId('modes').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      mode = b.dataset.mode === 'rate' ? 'rate' : 'count';
      writeURL();
      markMode();
      poll();
    });
  }
  byId('reset-zoom').addEventListener('click', resetZoom);
  byId('reset-zoom').hidden = !zoom;
  markPrecision();
  markMode();
  writeURL();
  byId('series-search').addEventListener('input', renderFinder);
  if (cfg.entities) {
    byId('entity-kind').addEventListener('change', (ev) => {
      chooseKind(ev.target.value);
      poll();
    });
    byId('entity-field').addEventListener('change', (ev) => {
      entities.field = ev.target.value;
      save('entityField', entities.field);
      poll();
    });
    byId('entity-lookup').addEventListener('submit', lookupEntity);
  }
  if (!cfg.health) renderNoHealth();
  byId('footer').textContent = 'Times are shown in ' + timeZone + '. The page refreshes every ' +
    Math.round(cfg.pollMillis / 100) / 10 + ' s without reloading.';
  window.addEventListener('resize', () => {
    for (const card of cards.values()) if (card.chart) card.chart.resize();
  });
  poll();
})();
