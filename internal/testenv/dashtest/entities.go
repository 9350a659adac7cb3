package dashtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	entity "github.com/pulse-dev/pulse/internal/entityapi"
)

// Entities is the fixture's in-memory dashboard.Config.Entities: the real
// entity counters are tested end to end in their own module. It declares
// kinds post (views, replies, likes, favorites) and user (posts,
// followers), and holds posts 7, 3, 9 and user 1.
type Entities struct {
	mu     sync.Mutex
	kinds  []entity.KindInfo
	counts map[string]map[int64]entity.Counts
	broken bool // every read fails, as a database outage would
	panics bool // Top panics, as a bug would
}

func newEntities() *Entities {
	m := &Entities{
		kinds: []entity.KindInfo{
			{Name: "post", Fields: []string{"views", "replies", "likes", "favorites"}},
			{Name: "user", Fields: []string{"posts", "followers"}},
		},
		counts: map[string]map[int64]entity.Counts{"post": {}, "user": {}},
	}
	m.Set("post", 7, entity.Counts{"views": 12, "likes": 3})
	m.Set("post", 3, entity.Counts{"views": 40, "replies": 2})
	m.Set("post", 9, entity.Counts{"views": 12, "favorites": 1})
	m.Set("user", 1, entity.Counts{"followers": 5, "posts": 2})
	return m
}

// Set replaces the counts of one entity of a declared kind.
func (m *Entities) Set(kind string, id int64, c entity.Counts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[kind][id] = c
}

// SetBroken makes every read fail (true), as a database outage would, or
// succeed again (false).
func (m *Entities) SetBroken(b bool) {
	m.mu.Lock()
	m.broken = b
	m.mu.Unlock()
}

// SetPanics makes Top panic with a value a client must never see, as a
// bug would.
func (m *Entities) SetPanics(p bool) {
	m.mu.Lock()
	m.panics = p
	m.mu.Unlock()
}

// Kinds returns the declared kinds.
func (m *Entities) Kinds() []entity.KindInfo { return slices.Clone(m.kinds) }

func (m *Entities) fields(kind string) ([]string, error) {
	for _, k := range m.kinds {
		if k.Name == kind {
			return k.Fields, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", entity.ErrUnknownKind, kind)
}

// Get returns one entity's counts, every declared field present.
func (m *Entities) Get(ctx context.Context, kind string, id int64) (entity.Counts, error) {
	out, err := m.BatchGet(ctx, kind, []int64{id})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// BatchGet returns the counts of ids, in their order.
func (m *Entities) BatchGet(_ context.Context, kind string, ids []int64) ([]entity.Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken {
		return nil, errors.New("entity: database is down")
	}
	fields, err := m.fields(kind)
	if err != nil {
		return nil, err
	}
	out := make([]entity.Counts, len(ids))
	for i, id := range ids {
		c := entity.Counts{}
		for _, f := range fields {
			c[f] = m.counts[kind][id][f]
		}
		out[i] = c
	}
	return out, nil
}

// Top returns the n entities of kind with the highest nonzero field,
// ties by ascending id.
func (m *Entities) Top(_ context.Context, kind, field string, n int) ([]entity.Ranked, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.panics {
		panic("secret internal state 0xdeadbeef")
	}
	if m.broken {
		return nil, errors.New("entity: database is down")
	}
	fields, err := m.fields(kind)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(fields, field) {
		return nil, fmt.Errorf("%w: %q", entity.ErrUnknownField, field)
	}
	var out []entity.Ranked
	for id, c := range m.counts[kind] {
		if c[field] > 0 {
			out = append(out, entity.Ranked{ID: id, Count: c[field]})
		}
	}
	slices.SortFunc(out, func(a, b entity.Ranked) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return int(a.ID - b.ID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
