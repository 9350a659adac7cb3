package redisconn

import (
	"strconv"
	"sync"

	"github.com/mna/redisc"
)

var (
	slotTagsOnce sync.Once
	slotTags     []string
)

// SlotTag returns a short string whose hash slot is slot, so that a key
// containing "{" + SlotTag(s) + "}" lands in slot s: a key of Pulse's own
// can then sit beside keys whose names it does not choose.
func SlotTag(slot int) string {
	slotTagsOnce.Do(func() {
		// Decimal strings cover all 16384 slots within ~170 000 tries;
		// a few milliseconds, once.
		slotTags = make([]string, redisc.HashSlots)
		left := redisc.HashSlots
		for n := 0; left > 0; n++ {
			t := strconv.Itoa(n)
			if s := redisc.Slot(t); slotTags[s] == "" {
				slotTags[s] = t
				left--
			}
		}
	})
	return slotTags[slot]
}
