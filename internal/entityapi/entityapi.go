// Package entityapi holds the values the entity counters and the
// dashboard both speak of. It lives in the library's root module so the
// dashboard can read entity counters without depending on the entity
// module (and the SQL drivers its tests need); package entity names these
// types and errors as its own.
package entityapi

import "errors"

// ErrUnknownKind is returned for an entity kind the app did not declare.
var ErrUnknownKind = errors.New("entity: unknown kind")

// ErrUnknownField is returned for a field its kind does not declare.
var ErrUnknownField = errors.New("entity: unknown field")

// Counts maps each declared field of one entity to its value; fields
// nobody touched are present with 0.
type Counts map[string]int64

// KindInfo names a kind and its fields, in declaration order.
type KindInfo struct {
	Name   string   `json:"name"`
	Fields []string `json:"fields"`
}

// Ranked is one entity of a top list.
type Ranked struct {
	ID    int64 `json:"id,string"`
	Count int64 `json:"count"`
}
