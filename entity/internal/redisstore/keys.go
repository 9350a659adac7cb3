// Package redisstore holds the Redis side of the entity counters: key
// names, the Lua scripts and a client that bounds and pipelines calls.
// The entity package decides which script runs when.
package redisstore

import (
	"strconv"
	"time"
)

const (
	// CountOffset is added to every cached value, so that a HINCRBY on a
	// key that is not cached (which starts from 0) gives a result far
	// below any cached value and shows the cache was cold.
	CountOffset = 1 << 40
	// ColdBelow is the line between the two: a cached field below it is
	// cold. Half the offset, so counts that drifted negative still cache.
	ColdBelow = CountOffset / 2
	// LeaseTTL bounds how long a reader may take between claiming the
	// right to warm an entity and warming it.
	LeaseTTL = 5 * time.Second
	// WriteMarkTTL bounds how long a write-through writer may take between
	// announcing its write and applying it to the cache; a writer slower
	// than that deletes the entry instead of incrementing it.
	WriteMarkTTL = 10 * time.Second
	// BatchField holds a flushing batch's id inside the flushing hash.
	BatchField = "#batch"
)

// Keys names the keys under one prefix. An entity's own keys share the
// hash tag {kind:id}, so its hash, lease and write marks live in one Redis
// Cluster slot and every script on one entity touches one slot. No script
// or transaction spans entities.
type Keys struct {
	prefix string
	// Pending holds write-behind deltas not yet taken by a flush.
	Pending string
	// Flushing holds the batch a flush is persisting.
	Flushing string
	// Epoch moves whenever a flush starts or finishes a batch.
	Epoch string
	// Globals caches the unread counts' global values.
	Globals string
}

// NewKeys names the keys under prefix.
func NewKeys(prefix string) Keys {
	return Keys{
		prefix:   prefix,
		Pending:  prefix + "pulse:ent-pending",
		Flushing: prefix + "pulse:ent-pending:flushing",
		Epoch:    prefix + "pulse:ent-epoch",
		Globals:  prefix + "pulse:ent:{globals}",
	}
}

// Entity is the hash caching one entity.
func (k Keys) Entity(kind string, id int64) string {
	return k.prefix + "pulse:ent:{" + kind + ":" + strconv.FormatInt(id, 10) + "}"
}

// LeaseKey is the lease of the entity whose hash is entityKey.
func LeaseKey(entityKey string) string { return entityKey + ":lease" }

// MarksKey holds the write marks of the entity whose hash is entityKey.
func MarksKey(entityKey string) string { return entityKey + ":writes" }

// PendingField names one counter in the write-behind pending hash.
func PendingField(kind string, id int64, field string) string {
	return PendingPrefix(kind, id) + field
}

// PendingPrefix is what an entity's fields in the pending hash start with.
func PendingPrefix(kind string, id int64) string {
	return kind + ":" + strconv.FormatInt(id, 10) + ":"
}
