// Package harness is what the test harnesses (internal/redistest,
// internal/pgtest, internal/mariadbtest) share besides the process
// launcher, internal/proc: the shape of their Main, a server shared by the
// tests of one binary, a private database per test, and the rule every
// test's deadlines follow.
//
// Each harness has a Setup and a Main built on Run, so a TestMain is one
// line:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// and a package that needs several harnesses passes the others' Setup:
//
//	func TestMain(m *testing.M) { redistest.Main(m, mariadbtest.Setup, pgtest.Setup) }
//
// # Deadlines
//
// The suite runs at any hour on a busy two-core machine, under the race
// detector, beside other jobs: any call may take seconds that takes
// milliseconds on an idle one. So a deadline in a test is one of three
// things, and never a fourth:
//
//  1. A guard against a hang, on a call that must succeed (a flush, a
//     Close, a read of what a test wrote, a server's start, an HTTP
//     answer): Hang, or longer. It only decides how long a broken build
//     takes to fail; a slow machine never reaches it. The harnesses'
//     helpers (redistest's Do, dashtest's and tracktest's Flush and Close,
//     proc's start) use it.
//  2. The fault under test, on a call that must fail: a short timeout
//     against a server that is paused, cut off or killed, which never
//     answers however long it is given. Short is fine there, but the same
//     timeout must not also bound the calls of the test that must succeed
//     (the flushes before the fault, the reads after it): give those
//     their own, or make the test's configured timeout long and cut the
//     failing call with a short context.
//  3. A bound a test checks a timeout against ("returns at its deadline,
//     not at the server's"): make the wrong outcome take far longer than
//     Hang (a 1-minute default beside a 100 ms context) and assert only
//     that the call returned before Hang, not within a few multiples of
//     the short one.
//
// The fourth, a test that fails because something took longer than it
// does on an idle machine, is a benchmark: testing.B with ReportMetric,
// or a count (commands, round trips, bytes) that does not depend on the
// machine at all. A lower bound ("waited at least its 200 ms") is fine:
// a slow machine only makes it pass more easily.
package harness
