// Numbers, times and durations as the page writes them.

export const numberFormat = new Intl.NumberFormat();
export const compactFormat = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
export const rateFormat = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 3 });
export const timeZone = (Intl.DateTimeFormat().resolvedOptions().timeZone) || 'local time';
// 24-hour times, as the chart axes show them.
export const clockFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
const minuteFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

// bucketLabel names the start of a bucket as precisely as its width needs.
export function bucketLabel(seconds, width) {
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
export function axisTime(ms, span) {
  const d = new Date(ms);
  const midnight = d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0;
  if (midnight) return dayFormat.format(d);
  if (span > 2 * 86400) return dayFormat.format(d) + ' ' + minuteFormat.format(d);
  return d.getSeconds() === 0 ? minuteFormat.format(d) : clockFormat.format(d);
}

// ago says how long ago something happened, in the largest fitting unit.
export function ago(seconds) {
  if (seconds < 1) return 'just now';
  if (seconds < 90) return Math.round(seconds) + ' s ago';
  if (seconds < 5400) return Math.round(seconds / 60) + ' min ago';
  if (seconds < 172800) return Math.round(seconds / 3600) + ' h ago';
  return Math.round(seconds / 86400) + ' d ago';
}
