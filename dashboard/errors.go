package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	entity "github.com/pulse-dev/pulse/internal/entityapi"
	"github.com/pulse-dev/pulse/timeseries"
)

// badRequest is a client mistake, answered 400 with its text.
type badRequest string

func (e badRequest) Error() string { return string(e) }

// answerError maps an error of a read to a status: client mistakes are 4xx
// with their text; a backend failure is 503 with a generic text, its
// details going to the log only.
func (s *server) answerError(w http.ResponseWriter, r *http.Request, err error) {
	var bad badRequest
	var unfit unprocessable
	var perr *timeseries.PrecisionError
	var uerr *timeseries.VisitorPrecisionError
	switch {
	case errors.As(err, &bad):
		jsonError(w, http.StatusBadRequest, bad.Error())
	case errors.As(err, &unfit):
		jsonError(w, http.StatusUnprocessableEntity, unfit.Error())
	case errors.As(err, &perr):
		jsonError(w, http.StatusBadRequest, fmt.Sprintf("precision %d is not kept; use one of %v", perr.Precision, perr.Valid))
	case errors.As(err, &uerr):
		jsonError(w, http.StatusBadRequest, fmt.Sprintf("no visitors are kept at precision %d; they are at %v", uerr.Precision, uerr.Kept))
	case errors.Is(err, timeseries.ErrRangeTooLarge):
		jsonError(w, http.StatusBadRequest, "range too large: ask for at most "+strconv.Itoa(s.cfg.MaxBuckets)+" buckets, or do not zero-fill")
	case errors.Is(err, errBusy):
		jsonError(w, http.StatusServiceUnavailable, "too many reads at once; try again")
	case errors.Is(err, timeseries.ErrUnknownSeries):
		jsonError(w, http.StatusNotFound, "no such series at this precision")
	case errors.Is(err, timeseries.ErrNoDurations):
		jsonError(w, http.StatusNotFound, "no durations are kept for this series")
	case errors.Is(err, timeseries.ErrNoVisitors):
		jsonError(w, http.StatusNotFound, "no visitors are kept for this series")
	case errors.Is(err, entity.ErrUnknownKind):
		jsonError(w, http.StatusNotFound, "no such entity kind")
	case errors.Is(err, entity.ErrUnknownField):
		jsonError(w, http.StatusBadRequest, "no such field for this kind")
	default:
		s.cfg.Logger.Warn("pulse dashboard: read failed", "path", r.URL.Path, "err", err)
		jsonError(w, http.StatusServiceUnavailable, "backend unavailable")
	}
}

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	writeJSONStatus(w, status, apiError{Error: msg})
}

// answer serves, for each request, what read makes of it as JSON, or
// its error as answerError does.
func answer[T any](s *server, read func(*http.Request) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := read(r)
		if err != nil {
			s.answerError(w, r, err)
			return
		}
		writeJSON(w, v)
	}
}

// writeJSON answers an API request with 200.
func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

// writeJSONStatus answers with v as JSON. API answers are never cached;
// the encoder escapes <, > and &, so a series name cannot become markup
// should the JSON ever be shown as HTML.
func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// The status is sent: a failed write is the client gone, and there
	// is no one left to tell.
	_ = json.NewEncoder(w).Encode(v)
}
