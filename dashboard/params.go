package dashboard

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	entity "github.com/pulse-dev/pulse/internal/entityapi"
	"github.com/pulse-dev/pulse/timeseries"
)

// precisionParam reads the required precision query parameter.
func (s *server) precisionParam(r *http.Request) (int, error) { return precisionOf(r, s.store.Schema) }

// precisionOf reads the required precision query parameter, one of
// schema's precisions.
func precisionOf(r *http.Request, schema timeseries.Schema) (int, error) {
	v := r.URL.Query().Get("precision")
	if v == "" {
		return 0, badRequest("precision is required, in seconds: one of " + fmt.Sprint(schema.Precisions))
	}
	p, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("precision %q is not a number of seconds", v))
	}
	if err := schema.CheckPrecision(p); err != nil {
		return 0, err
	}
	return p, nil
}

// intParam reads an optional integer query parameter within [lo, hi].
func intParam(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, badRequest(fmt.Sprintf("%s %q is out of range: want %d..%d", name, v, lo, hi))
	}
	if err != nil {
		return 0, badRequest(fmt.Sprintf("%s %q is not an integer", name, v))
	}
	if n < lo || n > hi {
		return 0, badRequest(fmt.Sprintf("%s %d is outside %d..%d", name, n, lo, hi))
	}
	return n, nil
}

// window reads the time range of a series request: either last=N (the N
// buckets ending with the current one) or from/to in unix seconds, each
// end optional.
func (s *server) window(r *http.Request, precision int, defLast int64) (rng timeseries.Range, current int64, err error) {
	current = timeseries.BucketStart(s.store.Now().Unix(), precision)
	const maxUnix = 1 << 40 // far beyond any bucket, small enough to add to safely
	if rng.From, err = intParam(r, "from", 0, 0, maxUnix); err != nil {
		return rng, current, err
	}
	if rng.To, err = intParam(r, "to", 0, 0, maxUnix); err != nil {
		return rng, current, err
	}
	if rng.From != 0 && rng.To != 0 && rng.From > rng.To {
		return rng, current, badRequest(fmt.Sprintf("from %d is after to %d", rng.From, rng.To))
	}
	maxBuckets := int64(s.cfg.MaxBuckets)
	last, err := intParam(r, "last", min(defLast, maxBuckets), 1, maxBuckets)
	if err != nil {
		return rng, current, err
	}
	q := r.URL.Query()
	if q.Get("last") != "" && (rng.From != 0 || rng.To != 0) {
		return rng, current, badRequest("give either last or from/to, not both")
	}
	if last > 0 && rng.From == 0 && rng.To == 0 {
		rng.From, rng.To = current-(last-1)*int64(precision), current
	}
	switch fill := q.Get("fill"); fill {
	case "":
	case "zero":
		rng.FillZero = true
	default:
		return rng, current, badRequest(fmt.Sprintf("fill %q: the only fill is zero", fill))
	}
	if rng.FillZero {
		err = boundFill(&rng, precision, current, maxBuckets)
	}
	return rng, current, err
}

// boundFill closes the open ends of a zero-filled range and checks its
// size before anything is read: an open end is the current bucket, or
// maxBuckets buckets before the other end.
func boundFill(rng *timeseries.Range, precision int, current, maxBuckets int64) error {
	p := int64(precision)
	if rng.To == 0 {
		rng.To = max(current, rng.From)
	}
	if rng.From == 0 {
		rng.From = max(1, rng.To-(maxBuckets-1)*p)
	}
	if n := (timeseries.BucketStart(rng.To, precision)-timeseries.BucketStart(rng.From, precision))/p + 1; n > maxBuckets {
		return badRequest(fmt.Sprintf("range of %d buckets: at most %d may be zero-filled", n, maxBuckets))
	}
	return nil
}

// checkName turns an invalid series name into a client mistake.
func checkName(name string) error {
	if err := timeseries.ValidateName(name); err != nil {
		return badRequest("invalid series name: " + strings.TrimPrefix(err.Error(), "timeseries: "))
	}
	return nil
}

// seriesName reads and checks the {name} path parameter. ServeMux has
// unescaped it: %2F in a name is a slash of the name, not a separator.
func seriesName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	return name, checkName(name)
}

// entityKind reads the {kind} path parameter and its declared fields.
func entityKind(r *http.Request, ents Entities) (kind string, fields []string, err error) {
	kind = r.PathValue("kind")
	for _, k := range ents.Kinds() {
		if k.Name == kind {
			return kind, k.Fields, nil
		}
	}
	return "", nil, entity.ErrUnknownKind
}

// parseID reads an entity id: a decimal integer in 0..MaxInt64, with a
// message that tells a malformed id from a negative or too large one.
func parseID(v string) (int64, error) {
	v = strings.TrimSpace(v)
	id, err := strconv.ParseInt(v, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(v, "-"):
		return 0, badRequest(fmt.Sprintf("id %q is negative", v))
	case errors.Is(err, strconv.ErrRange):
		return 0, badRequest(fmt.Sprintf("id %q is out of range: ids are at most %d", v, int64(math.MaxInt64)))
	case err != nil:
		return 0, badRequest(fmt.Sprintf("id %q is not an integer", v))
	case id < 0:
		return 0, badRequest(fmt.Sprintf("id %q is negative", v))
	}
	return id, nil
}

// repeatableParams are the query parameters an API request may give more
// than once: api/overview's series, one per series to pin.
var repeatableParams = map[string]bool{"series": true}

// checkRepeated refuses a query parameter given twice, which a handler
// would otherwise read as its first value and silently drop the rest
// (precision=5&precision=60). Only api/overview's series repeats.
func checkRepeated(r *http.Request) error {
	for name, values := range r.URL.Query() {
		if len(values) > 1 && !(repeatableParams[name] && r.URL.Path == "/api/overview") {
			return badRequest(fmt.Sprintf("%s is given %d times; give it once", name, len(values)))
		}
	}
	return nil
}
