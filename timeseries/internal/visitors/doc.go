// Package visitors turns a request's identity into a visitor id that
// cannot be traced back to a person: a keyed hash of the client's address
// and User-Agent (or of an id the app gives) under a salt that belongs to
// one UTC day. Every instance of an app shares the day's salt through
// Redis (see SaltKey), so they mint the same id for the same visitor; the
// salt's key expires shortly after its day and the Book forgets it, so
// afterwards nobody, the operator included, can recompute an id or link
// ids across days.
//
// The salt is a secret: it is never logged, never served and never part
// of any other key or value.
package visitors
