package alert

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReceiverKind says what a receiver speaks.
type ReceiverKind string

const (
	// ToAlertmanager posts to Alertmanager's API v2 (URL is its base,
	// e.g. "http://alertmanager:9093"); firing alerts are re-sent every
	// Config.ResendEvery, as Alertmanager expects of a rule evaluator.
	ToAlertmanager ReceiverKind = "alertmanager"
	// ToWebhook posts a body shaped like Alertmanager's webhook payload
	// (version 4) to URL, once per transition.
	ToWebhook ReceiverKind = "webhook"
	// ToSlack posts a Slack incoming-webhook body ({"text": …}) to URL,
	// once per transition.
	ToSlack ReceiverKind = "slack"
)

// Receiver is where notifications go. URL may carry a token: it is never
// logged, put in an error or rendered; Name stands for it.
type Receiver struct {
	Name string
	Kind ReceiverKind
	URL  string
	// Timeout bounds one attempt; default 5 s.
	Timeout time.Duration
}

// endpoint is the URL a receiver posts to.
func (r Receiver) endpoint() (string, error) {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("alert: receiver %q: the URL is not an absolute http(s) URL", r.Name)
	}
	if r.Kind == ToAlertmanager {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v2/alerts"
	}
	return u.String(), nil
}

func (r Receiver) validate() error {
	if r.Name == "" {
		return fmt.Errorf("alert: a receiver has no name (its name stands for its URL in logs)")
	}
	switch r.Kind {
	case ToAlertmanager, ToWebhook, ToSlack:
	default:
		return fmt.Errorf("alert: receiver %q: unknown kind %q (want alertmanager, webhook or slack)", r.Name, r.Kind)
	}
	_, err := r.endpoint()
	return err
}

// amAlert is one alert of Alertmanager's API v2 and of its webhook
// payload.
type amAlert struct {
	Status       string            `json:"status,omitempty"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
	Fingerprint  string            `json:"fingerprint,omitempty"`
}

// webhookBody is Alertmanager's webhook payload, version 4.
type webhookBody struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []amAlert         `json:"alerts"`
}

// message is one notification of one alert instance to one receiver.
type message struct {
	status   Status
	state    State     // Firing or Resolved
	endsAt   time.Time // for a firing alert to Alertmanager: when it lapses unless re-sent
	genURL   string
	extURL   string
	resend   bool  // a re-send to Alertmanager: nothing to mark
	token    int64 // the fencing token it was decided under; 0 for local alerts
	enqueue  time.Time
	receiver string
	// superseded: dropped unsent, its lease having passed to another
	// instance.
	superseded bool
}

func (m *message) alert() amAlert {
	a := amAlert{
		Status:       string(m.state),
		Labels:       m.status.Labels,
		Annotations:  m.status.Annotations,
		StartsAt:     m.status.ActiveAt.UTC(),
		GeneratorURL: m.genURL,
		Fingerprint:  fingerprint(m.status.Labels),
	}
	a.Annotations = maps.Clone(a.Annotations)
	if a.Annotations == nil {
		a.Annotations = map[string]string{}
	}
	a.Annotations["measured"] = measuredText(&m.status)
	if m.state == Resolved {
		a.EndsAt = m.status.Since.UTC()
	} else if !m.endsAt.IsZero() {
		a.EndsAt = m.endsAt.UTC()
	}
	return a
}

// body renders m for receiver r.
func (m *message) body(r Receiver) ([]byte, error) {
	a := m.alert()
	switch r.Kind {
	case ToAlertmanager:
		a.Status, a.Fingerprint = "", ""
		return json.Marshal([]amAlert{a})
	case ToSlack:
		return json.Marshal(map[string]string{"text": slackText(m)})
	}
	return json.Marshal(webhookBody{
		Version:           "4",
		GroupKey:          "{}:{alertname=\"" + m.status.Labels["alertname"] + "\"}",
		Status:            string(m.state),
		Receiver:          r.Name,
		GroupLabels:       map[string]string{"alertname": m.status.Labels["alertname"]},
		CommonLabels:      m.status.Labels,
		CommonAnnotations: a.Annotations,
		ExternalURL:       m.extURL,
		Alerts:            []amAlert{a},
	})
}

func slackText(m *message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", strings.ToUpper(string(m.state)), m.status.Labels["alertname"])
	if r := m.status.Labels["route"]; r != "" {
		fmt.Fprintf(&b, " on %s", r)
	}
	fmt.Fprintf(&b, " (%s): %s", m.status.Labels["severity"], measuredText(&m.status))
	if m.genURL != "" {
		fmt.Fprintf(&b, " <%s|chart>", m.genURL)
	}
	return b.String()
}

// measuredText says what s measured, with its unit and window, as the
// dashboard's banner does: "24 against 14.4 over 1h and 5m", "45s
// against 30s over 30s", "3 drops against 0 drops over 30s".
func measuredText(s *Status) string {
	amount := func(v float64) string {
		switch s.Unit {
		case "s":
			return formatDuration(time.Duration(v * float64(time.Second)))
		case "":
			return strconv.FormatFloat(v, 'g', 4, 64)
		}
		return strconv.FormatFloat(v, 'g', 4, 64) + " " + s.Unit
	}
	text := amount(s.Value) + " against " + amount(s.Threshold)
	if s.Window > 0 {
		text += " over " + s.Window.String()
		if s.ShortWindow > 0 {
			text += " and " + s.ShortWindow.String()
		}
	}
	return text
}

// fingerprint identifies a label set, as Alertmanager's does.
func fingerprint(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	slices.Sort(names)
	h := fnv.New64a()
	for _, k := range names {
		h.Write([]byte(k))
		h.Write([]byte{0xff})
		h.Write([]byte(labels[k]))
		h.Write([]byte{0xff})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// generatorURL links an alert to its series on the dashboard, with the
// window it was read over.
func generatorURL(dashboard string, s *Status) string {
	if dashboard == "" || s.Series == "" {
		return ""
	}
	q := url.Values{"series": {s.Series}}
	if s.Window > 0 {
		q.Set("window", s.Window.String())
	}
	sep := "?"
	if strings.Contains(dashboard, "?") {
		sep = "&"
	}
	return dashboard + sep + q.Encode()
}
