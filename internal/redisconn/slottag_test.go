package redisconn

import (
	"testing"

	"github.com/mna/redisc"
)

// TestSlotTag: every slot has a tag, and a key holding it in braces
// hashes to that slot.
func TestSlotTag(t *testing.T) {
	for s := range redisc.HashSlots {
		if got := redisc.Slot("pulse:x:{" + SlotTag(s) + "}"); got != s {
			t.Fatalf("SlotTag(%d) = %q hashes to slot %d", s, SlotTag(s), got)
		}
	}
}
