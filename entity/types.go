package entity

import (
	"context"
	"errors"

	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
	"github.com/pulse-dev/pulse/internal/entityapi"
)

// The types and errors the dashboard reads entity counters with; they
// are declared in the library's root module (internal/entityapi), so the
// dashboard does not depend on this module.
type (
	// Counts maps each declared field of one entity to its value; fields
	// nobody touched are present with 0.
	Counts = entityapi.Counts
	// KindInfo names a kind and its fields, in declaration order.
	KindInfo = entityapi.KindInfo
	// Ranked is one entity of a top list.
	Ranked = entityapi.Ranked
)

var (
	// ErrUnknownKind is returned for an entity kind the app did not declare.
	ErrUnknownKind = entityapi.ErrUnknownKind
	// ErrUnknownField is returned for a field its kind does not declare.
	ErrUnknownField = entityapi.ErrUnknownField
)

// ErrTooManyIDs is returned by BatchGet for more than MaxBatchIDs ids.
var ErrTooManyIDs = errors.New("entity: too many ids")

// ErrBadLimit is returned by Top for n outside 1..MaxTop.
var ErrBadLimit = errors.New("entity: n out of range")

// Fix is one counter Reconcile corrected: it held Was and now holds Now.
type Fix struct {
	Kind  string `json:"kind"`
	ID    int64  `json:"id,string"`
	Field string `json:"field"`
	Was   int64  `json:"was"`
	Now   int64  `json:"now"`
}

// Source returns the true value of one counter for every entity whose
// value is not zero, computed from the app's own records (e.g. a COUNT over
// its follows table). Entities it leaves out are taken to be 0.
type Source func(ctx context.Context) (map[int64]int64, error)

// ErrUnavailable is returned when the database did not answer within
// Config.StatementTimeout, or the connection to it failed. Nothing of the
// call is stored: apps answer it as 503 and the client may retry.
var ErrUnavailable = sqlstore.ErrUnavailable
