package redistest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// nodeLine is one line of CLUSTER NODES.
type nodeLine struct {
	id        string
	addr      string
	flags     []string
	master    string // master's ID for a replica, "-" otherwise
	epoch     int64
	link      string
	connected bool
	ranges    [][2]int
	migrating []int // slots in MIGRATING or IMPORTING state
}

func (n nodeLine) has(flag string) bool { return slices.Contains(n.flags, flag) }

func (n nodeLine) serves(slot int) bool {
	for _, r := range n.ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

func parseNodes(text string) ([]nodeLine, error) {
	var out []nodeLine
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("redistest: CLUSTER NODES line %q", line)
		}
		epoch, err := strconv.ParseInt(f[6], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redistest: CLUSTER NODES line %q: %w", line, err)
		}
		n := nodeLine{
			id:        f[0],
			addr:      strings.Split(strings.Split(f[1], ",")[0], "@")[0],
			flags:     strings.Split(f[2], ","),
			master:    f[3],
			epoch:     epoch,
			link:      f[7],
			connected: f[7] == "connected",
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				// [slot->-id] or [slot-<-id]
				s, _, _ := strings.Cut(strings.TrimPrefix(r, "["), "-")
				if v, err := strconv.Atoi(s); err == nil {
					n.migrating = append(n.migrating, v)
				}
				continue
			}
			lo, hi, found := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if found {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("redistest: CLUSTER NODES slot range %q", r)
			}
			n.ranges = append(n.ranges, [2]int{a, b})
		}
		out = append(out, n)
	}
	return out, nil
}

// slotMap is a canonical form of which node serves which slots.
func slotMap(nodes []nodeLine) string {
	var parts []string
	for _, n := range nodes {
		if len(n.ranges) > 0 {
			parts = append(parts, fmt.Sprint(n.id, n.ranges))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func (s *Server) clusterNodes() ([]nodeLine, error) {
	text, err := redis.String(s.do("CLUSTER", "NODES"))
	if err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER NODES on %s: %w", s.Addr, err)
	}
	return parseNodes(text)
}

// myself is the node's own line of CLUSTER NODES: its role as it sees it.
func (s *Server) myself() (nodeLine, error) {
	if !s.proc.Running() {
		return nodeLine{}, fmt.Errorf("redistest: %s is not running", s.Addr)
	}
	nodes, err := s.clusterNodes()
	if err != nil {
		return nodeLine{}, err
	}
	for _, n := range nodes {
		if n.has("myself") {
			return n, nil
		}
	}
	return nodeLine{}, errors.New("redistest: CLUSTER NODES without myself on " + s.Addr)
}

// nodeID is the node's cluster ID, kept in nodes.conf across restarts.
func (s *Server) nodeID() (string, error) {
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	if id != "" {
		return id, nil
	}
	id, err := redis.String(s.check("CLUSTER", "MYID"))
	if err != nil {
		return "", fmt.Errorf("redistest: CLUSTER MYID on %s: %w", s.Addr, err)
	}
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
	return id, nil
}
