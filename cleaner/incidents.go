package cleaner

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// DefaultIncidentRetention is Config.IncidentRetention when left zero.
const DefaultIncidentRetention = 30 * 24 * time.Hour

// incidentKeys are the keys of the incident record at precision p, as
// package forecast/fromstore writes them (IncidentKeys): a hash of
// records by ID and a sorted set of their IDs by end, under one hash tag.
func (c *Cleaner) incidentKeys(p int) (records, ends string) {
	records = c.schema.Prefix + "incidents:{" + strconv.Itoa(p) + "}"
	return records, records + ":ends"
}

// trimIncidentsScript deletes the records that ended before ARGV[1].
//
// KEYS: records hash, ends sorted set. Returns how many were deleted.
var trimIncidentsScript = redisconn.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
for i = 1, #ids, 1000 do
  redis.call('HDEL', KEYS[1], unpack(ids, i, math.min(i + 999, #ids)))
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
return #ids
`)

// incidentTrims are the calls that delete the incidents that ended more
// than the retention ago, one per precision: they ride in the round trip
// of the known set's first page.
func (c *Cleaner) incidentTrims() []redisconn.Cmd {
	if c.retention < 0 {
		return nil
	}
	cutoff := c.clock.Now().Add(-c.retention).Unix()
	cmds := make([]redisconn.Cmd, 0, len(c.schema.Precisions))
	for _, p := range c.schema.Precisions {
		records, ends := c.incidentKeys(p)
		cmds = append(cmds, trimIncidentsScript.Cmd([]string{records, ends}, cutoff))
	}
	return cmds
}

// countIncidents takes in the replies of incidentTrims.
func (c *Cleaner) countIncidents(replies []redisconn.Reply, st *Stats) error {
	for i, rep := range replies {
		n, err := redis.Int(rep.Value, rep.Err)
		if err != nil {
			return fmt.Errorf("trim the incidents at %d: %w", c.schema.Precisions[i], err)
		}
		st.IncidentsRemoved += n
	}
	return nil
}
