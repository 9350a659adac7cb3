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
