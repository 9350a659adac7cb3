package visitors

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// Day is the length of a salt's life: the 1-day bucket, in UTC.
const Day = 86400

// Grace is how long a salt outlives its day, for requests stamped just
// before midnight and handled just after.
const Grace = 300

// SaltKey is the Redis key of the salt of the day starting at day
// (unix seconds). It names the day, never the salt.
func SaltKey(prefix string, day int64) string {
	return prefix + "pulse:salt:" + strconv.FormatInt(day, 10)
}

// DayOf is the start of the UTC day of unix second sec.
func DayOf(sec int64) int64 { return sec - ((sec%Day)+Day)%Day }

// Fetch agrees on the salt of a day with the other instances: it offers
// proposal and returns the salt in force, proposal if none was.
type Fetch func(day int64, proposal Salt) (Salt, error)

// Book holds the salts of the days in use: the current one, the next
// (fetched ahead of midnight, so no request waits) and, for Grace, the
// previous one. Requests read it without locks.
type Book struct {
	days atomic.Pointer[[]daySalt]
	mu   sync.Mutex // one Keep at a time
}

type daySalt struct {
	day  int64
	salt *Salt
}

// For returns the salt of the day of second sec, nil when it is not known
// (Redis was never reached for it).
func (b *Book) For(sec int64) *Salt {
	p := b.days.Load()
	if p == nil {
		return nil
	}
	day := DayOf(sec)
	for _, d := range *p {
		if d.day == day {
			return d.salt
		}
	}
	return nil
}

// Keep makes sure the salts of the day of now and of the next day are
// known, asking fetch for those that are not, or all of them when
// recheck (so that a salt Redis lost is put back, and one another
// instance put back is adopted), and forgets those past their grace. It
// returns the first error; the salts it did get are kept.
func (b *Book) Keep(now int64, recheck bool, fetch Fetch) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	today := DayOf(now)
	var old []daySalt
	if p := b.days.Load(); p != nil {
		old = *p
	}
	var next []daySalt
	var firstErr error
	for _, day := range []int64{today - Day, today, today + Day} {
		have := find(old, day)
		if day < today {
			if have != nil && now < today+Grace {
				next = append(next, daySalt{day, have})
			}
			continue
		}
		if have != nil && !recheck {
			next = append(next, daySalt{day, have})
			continue
		}
		s, err := agree(day, have, fetch)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			if have != nil {
				next = append(next, daySalt{day, have})
			}
			continue
		}
		next = append(next, daySalt{day, s})
	}
	b.days.Store(&next)
	return firstErr
}

// agree offers the salt held (or a new random one) and returns the one in
// force.
func agree(day int64, have *Salt, fetch Fetch) (*Salt, error) {
	var proposal Salt
	if have != nil {
		proposal = *have
	} else if _, err := rand.Read(proposal[:]); err != nil {
		return nil, fmt.Errorf("salt: %w", err)
	}
	s, err := fetch(day, proposal)
	if err != nil {
		return nil, err
	}
	if have != nil && *have == s {
		return have, nil
	}
	return &s, nil
}

func find(ds []daySalt, day int64) *Salt {
	for _, d := range ds {
		if d.day == day {
			return d.salt
		}
	}
	return nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// Encode is how a salt is stored in Redis.
func (s *Salt) Encode() string { return hex.EncodeToString(s[:]) }

// DecodeSalt reads a salt stored by Encode.
func DecodeSalt(v []byte) (Salt, error) {
	var s Salt
	if hex.DecodedLen(len(v)) != len(s) {
		return s, errors.New("salt: stored value has the wrong length")
	}
	if _, err := hex.Decode(s[:], v); err != nil {
		return s, errors.New("salt: stored value is not hex")
	}
	return s, nil
}
