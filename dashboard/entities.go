package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	entity "github.com/pulse-dev/pulse/internal/entityapi"
)

// noEntities answers 404 when no Entities are configured (ents is nil),
// and says so.
func noEntities(w http.ResponseWriter, ents Entities) bool {
	if ents != nil {
		return false
	}
	jsonError(w, http.StatusNotFound, "no entity counters are configured")
	return true
}

type kindsResponse struct {
	Kinds []entity.KindInfo `json:"kinds"`
}

// handleKinds lists the entity kinds and their fields: GET api/entities.
func (s *server) handleKinds(w http.ResponseWriter, _ *http.Request) {
	if noEntities(w, s.cfg.Entities) {
		return
	}
	kinds := s.cfg.Entities.Kinds()
	if kinds == nil {
		kinds = []entity.KindInfo{}
	}
	writeJSON(w, kindsResponse{Kinds: kinds})
}

// entityRequest is a request for entities of one configured kind.
type entityRequest struct {
	ents   Entities
	kind   string
	fields []string                                                                      // the kind's declared fields, in order
	labels func(ctx context.Context, kind string, ids []int64) (map[int64]string, error) // Config.Labels
}

// entityHandler serves an endpoint under api/entities/{kind}: it answers
// 404 when no Entities are configured or the kind is unknown, and gives
// h the kind otherwise. h answers with what it returns, or with its error
// mapped by answerError.
func (s *server) entityHandler(h func(*http.Request, entityRequest) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if noEntities(w, s.cfg.Entities) {
			return
		}
		ctx, cancel := s.requestContext(r)
		defer cancel()
		kind, fields, err := entityKind(r, s.cfg.Entities)
		if err == nil {
			var resp any
			e := entityRequest{ents: s.cfg.Entities, kind: kind, fields: fields, labels: s.cfg.Labels}
			if resp, err = h(r.WithContext(ctx), e); err == nil {
				writeJSON(w, resp)
				return
			}
		}
		s.answerError(w, r, err)
	}
}

// orderedCounts writes counts as a JSON object in the kind's declared
// field order, then any other fields by name.
type orderedCounts struct {
	fields []string
	counts entity.Counts
}

func (o orderedCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	done := make(map[string]bool, len(o.fields))
	add := func(k string, v int64) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
	}
	for _, f := range o.fields {
		if v, ok := o.counts[f]; ok && !done[f] {
			done[f] = true
			add(f, v)
		}
	}
	var rest []string
	for k := range o.counts {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k, o.counts[k])
	}
	return append(b, '}'), nil
}

type entityResponse struct {
	Kind   string        `json:"kind"`
	ID     string        `json:"id"`
	Counts orderedCounts `json:"counts"`
}

// handleEntity answers one entity's counts: GET api/entities/{kind}/{id}.
func handleEntity(r *http.Request, e entityRequest) (any, error) {
	id, err := parseID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	ctx := r.Context() // with entityHandler's timeout
	counts, err := e.ents.Get(ctx, e.kind, id)
	if err != nil {
		return nil, err
	}
	return entityResponse{Kind: e.kind, ID: strconv.FormatInt(id, 10), Counts: orderedCounts{e.fields, counts}}, nil
}

type batchEntity struct {
	ID     string        `json:"id"`
	Counts orderedCounts `json:"counts"`
}

type batchResponse struct {
	Kind     string        `json:"kind"`
	Entities []batchEntity `json:"entities"`
}

// handleEntityBatch answers several entities: GET api/entities/{kind}?ids=1,2,3.
func handleEntityBatch(r *http.Request, e entityRequest) (any, error) {
	ids, err := idsParam(r)
	if err != nil {
		return nil, err
	}
	ctx := r.Context() // with entityHandler's timeout
	counts, err := e.ents.BatchGet(ctx, e.kind, ids)
	if err != nil {
		return nil, err
	}
	if len(counts) != len(ids) {
		return nil, fmt.Errorf("dashboard: %d counts for %d ids", len(counts), len(ids))
	}
	resp := batchResponse{Kind: e.kind, Entities: make([]batchEntity, len(ids))}
	for i, id := range ids {
		resp.Entities[i] = batchEntity{ID: strconv.FormatInt(id, 10), Counts: orderedCounts{e.fields, counts[i]}}
	}
	return resp, nil
}

// idsParam reads the required ids query parameter, at most MaxIDs.
func idsParam(r *http.Request) ([]int64, error) {
	raw := r.URL.Query().Get("ids")
	if strings.TrimSpace(raw) == "" {
		return nil, badRequest("ids is required: a comma-separated list of integers")
	}
	// Count before parsing, so a huge list costs nothing.
	if n := strings.Count(raw, ",") + 1; n > MaxIDs {
		return nil, badRequest(fmt.Sprintf("%d ids: at most %d per request", n, MaxIDs))
	}
	parts := strings.Split(raw, ",")
	ids := make([]int64, 0, len(parts))
	for _, part := range parts {
		id, err := parseID(part)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

type topResponse struct {
	Kind  string       `json:"kind"`
	Field string       `json:"field"`
	Top   []rankedItem `json:"top"`
}

// rankedItem is one entity of a top list, with its label when
// Config.Labels gives one.
type rankedItem struct {
	entity.Ranked
	Label string `json:"label,omitempty"`
}

// handleEntityTop answers the entities with the highest count of a field:
// GET api/entities/{kind}/top?field=views[&n=10].
func handleEntityTop(r *http.Request, e entityRequest) (any, error) {
	field := r.URL.Query().Get("field")
	if field == "" {
		return nil, badRequest("field is required: one of " + strings.Join(e.fields, ", "))
	}
	if !slices.Contains(e.fields, field) {
		return nil, entity.ErrUnknownField
	}
	n, err := intParam(r, "n", 10, 1, MaxTop)
	if err != nil {
		return nil, err
	}
	ctx := r.Context() // with entityHandler's timeout
	top, err := e.ents.Top(ctx, e.kind, field, int(n))
	if err != nil {
		return nil, err
	}
	items := make([]rankedItem, len(top))
	ids := make([]int64, len(top))
	for i, rk := range top {
		items[i].Ranked = rk
		ids[i] = rk.ID
	}
	if e.labels != nil && len(ids) > 0 {
		// Labels are a nicety: without them the list still answers.
		if labels, err := e.labels(ctx, e.kind, ids); err == nil {
			for i := range items {
				items[i].Label = labels[items[i].ID]
			}
		}
	}
	return topResponse{Kind: e.kind, Field: field, Top: items}, nil
}
