package adapter

import (
	"sync/atomic"
	"unsafe"
)

// A router hands every request of a route the same template string, the
// one the route was registered with, so a route's series is found by the
// address of that string's bytes: a pointer comparison, where the map of
// templates hashes the text on every request. A slot holds a routeSeries,
// whose template keeps those bytes alive, so an address seen again is the
// same text. A router that builds a new string per request never hits and
// costs a load and a comparison; no slot is written for it.
const routeMemoSlots = 256

// routeMemo maps template addresses to route series. A slot is written
// once: two routes whose addresses share a slot leave the second to the
// map, rather than take the slot from each other on every request.
type routeMemo [routeMemoSlots]atomic.Pointer[routeSeries]

func routeMemoIndex(route string, method int) int {
	p := uintptr(unsafe.Pointer(unsafe.StringData(route)))
	return int((p>>3 ^ p>>11 ^ uintptr(method)) % routeMemoSlots)
}

// find returns the series of route and method if a slot holds them.
func (m *routeMemo) find(route string, method int) *routeSeries {
	rs := m[routeMemoIndex(route, method)].Load()
	if rs != nil && rs.method == method && sameString(rs.template, route) {
		return rs
	}
	return nil
}

// remember gives rs a slot when route is rs's own string and the slot is
// free: an equal string at another address would never be found there.
func (m *routeMemo) remember(route string, rs *routeSeries) {
	if route != "" && sameString(rs.template, route) {
		m[routeMemoIndex(route, rs.method)].CompareAndSwap(nil, rs)
	}
}

// sameString reports whether a and b are the same bytes in memory.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
