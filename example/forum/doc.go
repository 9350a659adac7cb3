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
package forum
