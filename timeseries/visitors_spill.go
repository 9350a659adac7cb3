package timeseries

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Visitors Close could not send go to a file of their own beside the hits'
// spill files, so the hits' format and its exactly-once bookkeeping stay
// as they are: a hits spill file of any version loads as before, and a
// Recorder that predates visitors ignores these files. PFADD is
// idempotent, so these need no marker: a file is removed once all it
// held was sent, and sending it twice counts nobody twice.
type visitorSpillFile struct {
	Version int             `json:"version"`
	Written time.Time       `json:"written"`
	Keys    json.RawMessage `json:"keys"`
	SHA256  string          `json:"sha256"`
}

type visitorSpillKey struct {
	Key    string   `json:"key"`
	Expire int64    `json:"expire"`
	Newest int64    `json:"newest"`
	IDs    []uint64 `json:"ids"`
}

const (
	visitorSpillVersion = 1
	visitorSpillSuffix  = ".visitors"
)

// start loads the visitors a previous Recorder spilled and fetches the
// day's salt in the background, so the first requests find it without
// NewRecorder waiting on Redis.
func (u *visitorState) start() {
	if u.env.spillDir != "" {
		u.loadSpills()
	}
	go func() {
		// Under flushMu, so a Close that began first has flushed and
		// returned (its pool may be closed by now) and one that begins
		// now waits for this fetch.
		u.env.flushMu.Lock()
		defer u.env.flushMu.Unlock()
		if u.env.closed() {
			return // a closing Recorder needs no salt
		}
		if err := u.keepSalts(u.env.clock.Now().Unix(), u.env.timeout); err != nil {
			u.env.onError(fmt.Errorf("timeseries: visitors: %w", err))
		}
	}()
}

// spill writes the pending visitors to a new file in SpillDir. Files
// loaded and not yet sent are folded in and removed.
func (u *visitorState) spill() error {
	u.env.flushMu.Lock()
	defer u.env.flushMu.Unlock()
	u.drainAged()
	u.mu.Lock()
	keys := make([]visitorSpillKey, 0, len(u.pending))
	var n int64
	for name, k := range u.pending {
		sk := visitorSpillKey{Key: name, Expire: k.expire, Newest: k.newest}
		for id := range k.ids {
			sk.IDs = append(sk.IDs, id)
		}
		n += int64(len(sk.IDs))
		keys = append(keys, sk)
	}
	clear(u.pending)
	u.npending = 0
	files := u.files
	u.files = nil
	u.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	name := filepath.Join(u.env.spillDir, fmt.Sprintf("pulse-%s-%d%s", u.env.id, time.Now().UnixNano(), visitorSpillSuffix))
	if err := writeVisitorSpill(name, keys); err != nil {
		return fmt.Errorf("timeseries: close: %d visitor ids not written or spilled: %w", n, err)
	}
	for _, f := range files {
		_ = os.Remove(f)
	}
	return nil
}

func writeVisitorSpill(name string, keys []visitorSpillKey) error {
	return writeSpillFile(name, keys, func(body json.RawMessage, sum string) any {
		return visitorSpillFile{Version: visitorSpillVersion, Written: time.Now().UTC(), Keys: body, SHA256: sum}
	})
}

// loadSpills puts the ids of every visitor spill file in SpillDir
// in pending. A file that cannot be read whole is set aside as .bad.
func (u *visitorState) loadSpills() {
	names, _ := filepath.Glob(filepath.Join(u.env.spillDir, "*"+visitorSpillSuffix))
	slices.Sort(names)
	for _, name := range names {
		keys, err := readVisitorSpill(name)
		if err != nil {
			bad := name + badSuffix
			_ = os.Rename(name, bad)
			u.env.onError(fmt.Errorf("timeseries: visitor spill file %s set aside as %s: %w", name, bad, err))
			continue
		}
		u.mu.Lock()
		for _, sk := range keys {
			k := u.pending[sk.Key]
			if k == nil {
				k = &visitorKey{expire: sk.Expire, ids: map[uint64]struct{}{}}
				u.pending[sk.Key] = k
			}
			k.newest = max(k.newest, sk.Newest)
			for _, id := range sk.IDs {
				if _, dup := k.ids[id]; !dup {
					k.ids[id] = struct{}{}
					u.npending++
				}
			}
		}
		u.files = append(u.files, name)
		u.mu.Unlock()
	}
}

func readVisitorSpill(name string) ([]visitorSpillKey, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var f visitorSpillFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a visitor spill file: %w", err)
	}
	if f.Version != visitorSpillVersion {
		return nil, fmt.Errorf("visitor spill file version %d, want %d", f.Version, visitorSpillVersion)
	}
	if err := checkSpillSum(f.Keys, f.SHA256); err != nil {
		return nil, err
	}
	var keys []visitorSpillKey
	if err := json.Unmarshal(f.Keys, &keys); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	for i, k := range keys {
		if k.Key == "" || len(k.IDs) == 0 {
			return nil, fmt.Errorf("key %d is malformed", i)
		}
	}
	return keys, nil
}
