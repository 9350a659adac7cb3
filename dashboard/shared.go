package dashboard

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// sharedWindows lists the series kept at precision p and reads them over
// rng (see windowSet), or joins the identical read already under way:
// open dashboards poll the same view at once, and one read serves them
// all. pins are the series the caller charts whatever their rank. The
// result is shared: callers must not change it.
//
// The read runs in the goroutine of the request that started it, so a
// panic in it answers 500 to every request sharing it (singleflight
// re-panics in each) rather than ending the process. Requests that join
// it wait for it: it ends within Timeout of its start, before their own
// deadlines.
func (rd *reader) sharedWindows(ctx context.Context, p int, rng timeseries.Range, pins []string) (*windowSet, error) {
	key := strconv.Itoa(p) + ":" + strconv.FormatInt(rng.From, 10) + ":" + strconv.FormatInt(rng.To, 10) + "\x00" + strings.Join(pins, "\x00")
	v, err, _ := rd.windows.Do(key, func() (any, error) { return rd.readWindows(ctx, p, rng, pins) })
	if err != nil {
		return nil, err
	}
	return v.(*windowSet), nil
}

// readWindows is the read sharedWindows shares. The default window is
// read on from the memo of p, which keeps it between reads; any other is
// read in full.
func (rd *reader) readWindows(ctx context.Context, p int, rng timeseries.Range, pins []string) (*windowSet, error) {
	ctx, done, err := rd.detached(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	names, err := rd.namesAt(ctx, p, "")
	if err != nil {
		return nil, err
	}
	m := rd.memoFor(p, rng)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.refresh(ctx, rd.store.Store, p, names, rng.From, rng.To, rd.store.Now().Unix()); err != nil {
		return nil, fmt.Errorf("dashboard: windows: %w", err)
	}
	return m.windowSet(p, pins), nil
}

// memoFor is the memo that keeps the default window at precision p, the
// one the page polls, or a new one for any other window. Its buckets
// settle as the scans' do: the same few flush intervals.
func (rd *reader) memoFor(p int, rng timeseries.Range) *windowMemo {
	settle := int64((rd.scanner.Settle + time.Second - 1) / time.Second)
	if rng.To-rng.From != int64(min(windowBuckets, rd.maxBuckets)-1)*int64(p) {
		return &windowMemo{settle: settle}
	}
	rd.memosMu.Lock()
	defer rd.memosMu.Unlock()
	if rd.memos == nil {
		rd.memos = map[int]*windowMemo{}
	}
	m := rd.memos[p]
	if m == nil {
		m = &windowMemo{settle: settle}
		rd.memos[p] = m
	}
	return m
}

// sharedScan fits every series at precision p (or only name) for its
// flags, or joins the identical scan already under way in the same
// bucket: open dashboards ask for the anomalies as a bucket closes, all
// at once, and one scan of every series serves them all. It runs, and
// is shared, as sharedWindows' read is; callers must not change it.
func (rd *reader) sharedScan(ctx context.Context, p int, current int64, name string) (map[string]fromstore.Result, error) {
	key := strconv.Itoa(p) + ":" + strconv.FormatInt(current, 10) + ":" + name
	v, err, _ := rd.scans.Do(key, func() (any, error) {
		ctx, done, err := rd.detached(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
		names, err := rd.namesAt(ctx, p, name)
		if err != nil {
			return nil, err
		}
		return rd.scanner.FitAll(ctx, names, p, forecast.Config{FlagsOnly: true})
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string]fromstore.Result), nil
}

// namesAt is the known series at precision p, or only name when given.
func (rd *reader) namesAt(ctx context.Context, p int, name string) ([]string, error) {
	if name != "" {
		return []string{name}, nil
	}
	return rd.store.NamesAt(ctx, p)
}
