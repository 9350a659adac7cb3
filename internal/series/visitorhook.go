package series

// Visitor is who made a request, as an adapter knows it: the client's
// address and User-Agent, or the id the app's VisitorID hook gave. The
// recorder hashes it under the day's salt at once and keeps only that.
type Visitor struct {
	Addr, UserAgent string
	// ID, when set, is the app's id, hashed instead of Addr and UserAgent.
	ID string
}

// Empty reports whether v names nobody: the request is not counted as a
// visitor.
func (v Visitor) Empty() bool { return v.Addr == "" && v.UserAgent == "" && v.ID == "" }

// RecordVisitor is how internal/track counts a request's visitor in the
// series cs (each a *timeseries.Counter of rec, nil for none). Package
// timeseries sets it at init; a hook, like RecordTimed, so that the
// package exports no method for it.
var RecordVisitor func(rec any, v Visitor, cs [MaxTimed]any)
