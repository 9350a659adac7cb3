package timeseries

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// sender is the Recorder's part that talks to Redis for the hits: it
// builds each batch's script call, sends a round's calls to the nodes
// (one pipeline each), settles each batch by its reply in the ledger, and
// keeps what sending learns: the cluster's node plan, the slots found
// moving, the markers' renewals and the members listed in known:. The
// Recorder's flush decides when a round runs; the sender runs it.
type sender struct {
	router        *redisconn.Router
	schema        series.Keys
	clock         Clock
	timeout       time.Duration
	waitReplicas  int
	maxPendingAge int64
	markerBase    string // the markers' name before any hash tag

	// mu is the Recorder's: it guards the ledger, the flush status and
	// the fields below.
	mu          *sync.Mutex
	ledger      *ledger
	status      *flushStatus
	removeSpill func(name string) // removes a spill file all written

	unlisted      map[string]struct{} // cluster: to list in known: once landed
	listed        map[string]struct{} // members this recorder has listed; see known.go
	markerRenewed map[string]int64    // unix second of each marker's last renewal; see ttlFor
	plan          *nodePlan           // cluster: the writes' grouping by node; see cluster.go
	moving        map[int]struct{}    // cluster: slots batched per slot; see cluster.go

	// perSlotOnly is set once the cluster refused the node script (Redis
	// before 7): from then on batches are made per slot.
	perSlotOnly atomic.Bool
}

// newSender makes the sender of one Recorder; the caller sets its mu,
// ledger, status and removeSpill before the first round.
func newSender(router *redisconn.Router, cfg Config, schema series.Keys, markerBase string) *sender {
	return &sender{
		router:        router,
		schema:        schema,
		clock:         cfg.Clock,
		timeout:       cfg.FlushTimeout,
		waitReplicas:  cfg.WaitReplicas,
		maxPendingAge: int64(cfg.MaxPendingAge / time.Second),
		markerBase:    markerBase,
		unlisted:      map[string]struct{}{},
		listed:        map[string]struct{}{},
		markerRenewed: map[string]int64{},
		moving:        map[int]struct{}{},
	}
}
