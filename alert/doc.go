// Package alert says when an app counted by Pulse is in trouble: it
// evaluates rules over the recorder's series in Redis and sends the
// alerts they raise to Alertmanager, webhooks or Slack.
//
// # Rules
//
// A Rule watches one series (App, the series of every request; a route's,
// such as "GET /posts/:id"; or EveryRoute, a template applied to each
// route in the known set) with one Kind:
//
//   - Availability: an SLO on the share of answers that are not 5xx,
//     alerted by multiwindow burn rates (DefaultWindows: 2 % of a 30-day
//     budget in an hour pages, 10 % in three days opens a ticket).
//   - Latency: an SLO on the share of requests that finish within
//     Rule.Threshold, read from the duration histograms, or from the
//     slow-request series when the recorder counts them (see
//     SlowThresholds).
//   - Absence: a series that receives nothing for Rule.Quiet while the
//     same hours a day and a week earlier were busy.
//   - Health: the evaluating instance's own recorder (Redis down, hits
//     dropped, flushes stalled).
//   - Anomaly: the series breaks from its forecast, as Config.Detector
//     tells.
//
// Rules are Go values or a JSON file (see File), checked strictly: an
// unknown field, a value out of range or a field the kind does not read
// is an error naming the rule, the line and the field.
//
//	rules, err := alert.LoadRules("rules.json")
//	if err != nil {
//		log.Fatal(err) // every problem in the file, not the first
//	}
//
// DefaultRules, used when Config.Rules is nil, watch the app's
// availability, absence and health.
//
// # The evaluator
//
// New checks a Config once and returns an Evaluator; Run evaluates every
// Config.Interval until its context ends, and Close stops it:
//
//	ev, err := alert.New(alert.Config{
//		Pool:      pool, // the recorder's; the caller owns it
//		Schema:    schema,
//		Recorder:  rec,
//		Rules:     rules,
//		Receivers: []alert.Receiver{{Name: "am", Kind: alert.ToAlertmanager, URL: amURL}},
//	})
//	if err != nil {
//		return err
//	}
//	go ev.Run(ctx)
//	defer ev.Close(context.Background())
//
// Every Config field says what its zero value means; only Pool is
// required. Handler serves the rules, their alerts and the recent
// transitions as JSON, and Health says how the evaluator itself is
// doing.
//
// # The lease
//
// Every instance of an app may run an Evaluator. A lease in Redis picks
// the one that evaluates; the others wait and take over when it lapses
// (Config.LeaseTTL). Each write of alert state carries the lease's
// fencing token, so an instance that lost the lease without knowing it,
// paused or cut off, cannot overwrite its successor's: its writes fail
// with ErrFenced. Because the state lives in Redis, any instance's
// Handler answers alike.
//
// While a recorder's flushes fail or lag (Config.StaleAfter), the data
// counts as missing: no rule over series fires or resolves on it, and
// its alerts are marked Stale with their state held.
//
// # States
//
// An alert instance, one per rule, severity and series, moves through
// the States:
//
//	Inactive ──breach──▶ Pending ──breach lasts Rule.For──▶ Firing
//	    ▲                   │                                  │
//	    └──breach ends──────┘          breach over for Rule.KeepFiringFor
//	                                                           ▼
//	                                                       Resolved
//
// Each change is a Transition; the last Config.History of them are kept.
//
// # Delivery
//
// Each Receiver has its own bounded queue (Config.QueueSize), so a slow
// or unreachable receiver delays no other. A notification is retried
// with backoff between Config.MinBackoff and Config.MaxBackoff until
// Config.GiveUpAfter, and one a receiver refuses for good (a 4xx other
// than 408 and 429) is not retried. A firing alert is posted to Alertmanager again every
// Config.ResendEvery, so Alertmanager keeps it while it lasts. A
// Receiver's URL may hold a token: it is never logged or put in an
// error; its Name stands for it.
package alert
