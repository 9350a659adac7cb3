// Reading the dashboard's JSON API.

import { cfg } from './config.js';

// getJSON fetches an API URL relative to the dashboard root and returns
// its JSON, or throws an Error that says what went wrong. A status in
// okStatus is not an error when its body is JSON (api/health answers 503
// with the same body as 200).
export async function getJSON(url, okStatus) {
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
