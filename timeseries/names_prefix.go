package timeseries

import (
	"context"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// namesByPrefix lists the names at precision by the prefix of their
// members ("5:"), reading only those, in pages that each start after the
// last: what NamesAt reads when the known set allows it, that is when
// all its members have the same score (a recorder lists every member at
// 0), so that they are ordered by their bytes, and none sorts before "1"
// (no "05:a" or "+5:a", which name a at 5 too). ok is false when it does
// not allow it.
func (s *Store) namesByPrefix(ctx context.Context, precision int) (names []string, ok bool, err error) {
	known := s.schema.KnownKey()
	conn, err := s.router.Get(known)
	if err != nil {
		return nil, false, err
	}
	defer conn.Close()
	timeout := redisconn.ReadTimeout(ctx)
	conn.Send("ZRANGE", known, 0, 0, "WITHSCORES")
	conn.Send("ZRANGE", known, -1, -1, "WITHSCORES")
	conn.Send("ZLEXCOUNT", known, "-", "(1")
	replies, err := redis.Values(redis.DoWithTimeout(conn, timeout, ""))
	if err != nil {
		return nil, false, err
	}
	lowest, err1 := redis.Strings(replies[0], nil)
	highest, err2 := redis.Strings(replies[1], nil)
	below, err3 := redis.Int(replies[2], nil)
	switch {
	case err1 != nil || err2 != nil || err3 != nil:
		return nil, false, nil // not a sorted set: the full read says so
	case len(lowest) == 0:
		return nil, true, nil
	case len(lowest) != 2 || len(highest) != 2 || lowest[1] != highest[1] || below != 0:
		return nil, false, nil
	}
	prefix := strconv.Itoa(precision) + ":"
	end := "(" + strconv.Itoa(precision) + ";" // ';' follows ':'
	from := "[" + prefix
	for {
		members, err := redis.ByteSlices(redis.DoWithTimeout(conn, timeout, "ZRANGEBYLEX", known, from, end, "LIMIT", 0, knownPage))
		if err != nil {
			return nil, false, err
		}
		for _, m := range members {
			names = append(names, string(m[len(prefix):]))
		}
		if len(members) < knownPage {
			return names, true, nil
		}
		from = "(" + prefix + names[len(names)-1]
	}
}
