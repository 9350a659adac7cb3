package redisconn

import (
	"strconv"
	"sync"

	"github.com/mna/redisc"
)

var (
	slotTagsOnce sync.Once
	// slotTags[s] is the number whose decimal string hashes to slot s.
	// Numbers, not strings: 16,384 strings would be 16,384 pointers and
	// objects for the garbage collector to mark at every cycle, which a
	// busy server runs about a hundred times a second.
	slotTags []uint32
)

// SlotTag returns a short string whose hash slot is slot, so that a key
// containing "{" + SlotTag(s) + "}" lands in slot s: a key of Pulse's own
// can then sit beside keys whose names it does not choose.
func SlotTag(slot int) string {
	slotTagsOnce.Do(func() {
		// Decimal strings cover all 16384 slots within ~170 000 tries;
		// a few milliseconds, once.
		slotTags = make([]uint32, redisc.HashSlots)
		found := make([]bool, redisc.HashSlots)
		left := redisc.HashSlots
		for n := 0; left > 0; n++ {
			if s := redisc.Slot(strconv.Itoa(n)); !found[s] {
				slotTags[s], found[s] = uint32(n), true
				left--
			}
		}
	})
	return strconv.FormatUint(uint64(slotTags[slot]), 10)
}
