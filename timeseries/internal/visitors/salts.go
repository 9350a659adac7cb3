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

// An Offer is a day whose salt is to be agreed with the other
// instances: Salt is the one to offer (the one held, or a new random
// one), which the caller replaces with the salt in force, or sets Err.
type Offer struct {
	Day  int64
	Salt Salt
	Err  error
}

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

// Due returns the days whose salt is to be agreed at now: today's and
// tomorrow's when they are not known, or both when recheck (so that a
// salt Redis lost is put back, and one another instance put back is
// adopted). The caller agrees on them with Redis and hands them to Keep:
// the Book itself never calls out.
func (b *Book) Due(now int64, recheck bool) ([]Offer, error) {
	today := DayOf(now)
	var old []daySalt
	if p := b.days.Load(); p != nil {
		old = *p
	}
	var due []Offer
	for _, day := range []int64{today, today + Day} {
		have := find(old, day)
		if have != nil && !recheck {
			continue
		}
		o := Offer{Day: day}
		if have != nil {
			o.Salt = *have
		} else if _, err := rand.Read(o.Salt[:]); err != nil {
			return nil, fmt.Errorf("salt: %w", err)
		}
		due = append(due, o)
	}
	return due, nil
}

// Keep keeps the salts agreed in offers, a day whose offer failed keeping
// the salt held, and forgets the days past their grace. It returns the
// first error of offers.
func (b *Book) Keep(now int64, offers []Offer) error {
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
		for _, o := range offers {
			switch {
			case o.Day != day:
			case o.Err != nil:
				firstErr = cmpErr(firstErr, o.Err)
			case have == nil || *have != o.Salt:
				agreed := o.Salt
				have = &agreed
			}
		}
		if have != nil {
			next = append(next, daySalt{day, have})
		}
	}
	b.days.Store(&next)
	return firstErr
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
