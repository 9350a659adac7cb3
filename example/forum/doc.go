// Package forum is the example app: a small forum whose pages and JSON API
// keep their counts (posts, views, likes, followers, replies, unread
// replies) in Pulse entity counters, durable in SQL and cached in Redis.
//
// The forum's own tables (users, posts, likes, follows, replies) are the
// source of truth for every count but views; likes and follows are stored
// once per user, so repeating one changes nothing. A reconciler recomputes
// those counts from the tables daily and on demand and repairs any drift,
// such as a count lost when the process died between storing a like and
// counting it.
//
// Register puts Protect in front of every route: security headers, no
// cross-origin writes, JSON-only bodies decoded strictly, a body limit, and
// the admin routes behind a login or off. Each request's database work runs
// under one deadline (Config.QueryTimeout); a database that does not answer
// in time gives a JSON 503. A row is inserted in a transaction of its own,
// so a request answered with an error has stored nothing; the counts a
// stored row implies follow it, and if the database fails in between, the
// request still succeeds and the reconciler repairs the counts.
package forum
