package timeseries

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A spill file holds batches, each with its marker and seq, so that the
// Recorder that sends them later is refused by Redis for any batch that
// did land before (a flush whose reply was lost): sent once, whatever
// happens in between. The checksum tells a torn or edited file.
type spillFile struct {
	Version int             `json:"version"`
	Written time.Time       `json:"written"`
	Batches json.RawMessage `json:"batches"`
	SHA256  string          `json:"sha256"`
}

// Version 2 added the durations of a batch (batch.Lat), version 3 node
// batches (batch.Node); an older file is read as batches without them.
const (
	spillVersion = 3
	spillSuffix  = ".spill"
	badSuffix    = ".bad"
)

// spill writes everything not yet in Redis to a new file in SpillDir and
// forgets it, so Close can return. Files it had loaded and not finished
// are folded into the new one and removed.
func (r *Recorder) spill() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	r.drainLocked()
	all, files := r.ledger.handOff()
	r.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	var hits int64
	for _, b := range all {
		hits += b.incr
	}
	np := int64(len(r.schema.Precisions))
	name := filepath.Join(r.spillDir, fmt.Sprintf("pulse-%s-%d%s", r.id, time.Now().UnixNano(), spillSuffix))
	if err := writeSpill(name, all); err != nil {
		return fmt.Errorf("timeseries: close: %d hits not written or spilled: %w", ceilDiv(hits, np), err)
	}
	for _, f := range files {
		_ = os.Remove(f)
	}
	r.onError(fmt.Errorf("timeseries: close: Redis unreachable: %d hits spilled to %s", ceilDiv(hits, np), name))
	return nil
}

func writeSpill(name string, batches []*batch) error {
	return writeSpillFile(name, batches, func(body json.RawMessage, sum string) any {
		return spillFile{Version: spillVersion, Written: time.Now().UTC(), Batches: body, SHA256: sum}
	})
}

// writeSpillFile writes body, with its checksum, in the envelope wrap
// makes of them: the hits' spill files and the visitors' share it.
func writeSpillFile(name string, body any, wrap func(body json.RawMessage, sum string) any) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(raw)
	data, err := json.Marshal(wrap(raw, hex.EncodeToString(sum[:])))
	if err != nil {
		return err
	}
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// Renamed only once complete, so a crash mid-write leaves a .tmp file
	// that is never read, not a torn spill file.
	return os.Rename(tmp, name)
}

// checkSpillSum reports a spill body whose checksum is not sum.
func checkSpillSum(body json.RawMessage, sum string) error {
	got := sha256.Sum256(body)
	if hex.EncodeToString(got[:]) != sum {
		return errors.New("checksum mismatch: the file is torn or was edited")
	}
	return nil
}

// loadSpills queues the batches of every spill file in SpillDir, to be
// sent before anything else. A file that cannot be read as a whole is
// renamed to end in .bad and reported, never half sent.
func (r *Recorder) loadSpills() error {
	if err := os.MkdirAll(r.spillDir, 0o755); err != nil {
		return fmt.Errorf("timeseries: spill dir: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(r.spillDir, "*"+spillSuffix))
	if err != nil {
		return fmt.Errorf("timeseries: spill dir: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		batches, err := readSpill(name)
		if err != nil {
			bad := name + badSuffix
			_ = os.Rename(name, bad)
			r.onError(fmt.Errorf("timeseries: spill file %s set aside as %s: %w", name, bad, err))
			continue
		}
		r.mu.Lock()
		r.ledger.queue(name, batches)
		r.mu.Unlock()
		if len(batches) == 0 {
			_ = os.Remove(name)
		}
	}
	return nil
}

func readSpill(name string) ([]*batch, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var f spillFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a spill file: %w", err)
	}
	if f.Version < 1 || f.Version > spillVersion {
		return nil, fmt.Errorf("spill file version %d, want 1 to %d", f.Version, spillVersion)
	}
	if err := checkSpillSum(f.Batches, f.SHA256); err != nil {
		return nil, err
	}
	var batches []*batch
	if err := json.Unmarshal(f.Batches, &batches); err != nil {
		return nil, fmt.Errorf("batches: %w", err)
	}
	for i, b := range batches {
		if !wellFormed(b, f.Version) {
			return nil, fmt.Errorf("batch %d is malformed", i)
		}
		for _, d := range b.Deltas {
			b.incr += d
		}
		for _, d := range b.Lat {
			b.durationsN += d.count()
		}
	}
	return batches, nil
}

// wellFormed checks a batch read from a spill file of version v.
func wellFormed(b *batch, v int) bool {
	n := len(b.Keys)
	if b.Marker == "" || b.Seq <= 0 || n+len(b.Lat) == 0 || len(b.Fields) != n || len(b.Deltas) != n || len(b.Members) != n {
		return false
	}
	if (v < 2 && len(b.Lat) > 0) || (v < 3 && b.Node) {
		return false
	}
	for _, d := range b.Lat {
		if d.Key == "" || len(d.Fields) == 0 || len(d.Fields) != len(d.Counts) || d.Min > d.Max {
			return false
		}
	}
	return true
}

// removeSpill deletes a spill file whose batches have all been written.
func (r *Recorder) removeSpill(name string) {
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.onError(fmt.Errorf("timeseries: remove sent spill file: %w", err))
	}
}
