package forum

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// RunDemoTraffic sends a few requests a second to the forum at base until
// ctx is done: page views, likes, follows, replies and the odd broken
// link, so a new user sees the dashboard move. Its rate follows the time
// of day, and after a few calm minutes an incident now and then (a burst
// of post views, or a fall to a trickle) breaks the traffic for
// three minutes, so the dashboard's forecasts have something to flag (see
// demoplan.go). The requests come from
// demoVisitors made-up visitors, each with a browser of its own and, on
// a loopback forum, a source address of its own (127.0.0.x), so the
// dashboard's unique visitors move too without the forum trusting any
// proxy header.
func RunDemoTraffic(ctx context.Context, base string) {
	visitors := NewDemoVisitors()
	defer visitors.Close()
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	plan := newDemoPlan(time.Now(), rng.Uint64())
	ticker := time.NewTicker(demoTick)
	defer ticker.Stop()
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-ticker.C:
		}
		rate, inc := plan.at(now)
		for _, r := range demoTickRequests(rng, rate, inc) {
			reqCtx, cancel := context.WithTimeout(ctx, demoTimeout)
			visitors.Send(reqCtx, base, DemoStep{Visitor: rng.IntN(demoVisitors), Method: r.method, Path: r.path, Body: r.body})
			cancel()
		}
	}
}

// demoTick is how often the demo draws its next requests.
const demoTick = 50 * time.Millisecond

// demoTimeout bounds each of the demo's requests: a forum that hangs
// holds the demo up no longer.
const demoTimeout = 5 * time.Second

type demoReq struct {
	method, path string
	body         any
}

// demoTickRequests draws one tick's requests at rate requests a second,
// as inc bends them: a spike adds post views, a drop leaves all but a
// trickle out, as when the way to the forum is cut.
func demoTickRequests(rng *rand.Rand, rate float64, inc incident) []demoReq {
	var out []demoReq
	perTick := rate * demoTick.Seconds()
	if inc == drop {
		perTick *= dropShare
	}
	if rng.Float64() < perTick {
		method, path, body := demoRequest(rng)
		out = append(out, demoReq{method, path, body})
	}
	// Post views are 30 % of the traffic; a spike multiplies them.
	if inc == spike && rng.Float64() < 0.3*(spikeFactor-1)*perTick {
		out = append(out, demoReq{http.MethodGet, fmt.Sprintf("/posts/%d", 1+rng.IntN(len(seedPosts))), nil})
	}
	return out
}

// demoRequest picks the next request of the demo traffic, on a seeded
// post and user; body is nil for none.
func demoRequest(rng *rand.Rand) (method, path string, body any) {
	post := 1 + rng.IntN(len(seedPosts))
	user := 1 + rng.IntN(len(seedUsers))
	switch n := rng.IntN(100); {
	case n < 30:
		return http.MethodGet, fmt.Sprintf("/posts/%d", post), nil
	case n < 50:
		return http.MethodGet, "/", nil
	case n < 60:
		return http.MethodGet, "/posts", nil
	case n < 75:
		return http.MethodGet, fmt.Sprintf("/api/posts/%d", post), nil
	case n < 83:
		return http.MethodPost, fmt.Sprintf("/api/posts/%d/like", post), map[string]int{"user": user}
	case n < 88:
		return http.MethodPost, fmt.Sprintf("/api/posts/%d/replies", post), map[string]any{"user": user, "text": "Nice one."}
	case n < 92:
		return http.MethodPost, fmt.Sprintf("/api/users/%d/follow/%d", user, 1+rng.IntN(len(seedUsers))), nil
	case n < 95:
		return http.MethodGet, fmt.Sprintf("/api/users/%d/unread", user), nil
	default:
		return http.MethodGet, "/no-such-page", nil
	}
}

// demoVisitors is how many visitors the demo traffic plays.
const demoVisitors = 40

// DemoStep is one request of the demo traffic: which of its visitors
// sends it, and what; Body is sent as JSON, nil for none.
type DemoStep struct {
	Visitor      int
	Method, Path string
	Body         any
}

// DemoSteps are n requests of the demo traffic's mix at its everyday
// rate, the same for the same seed, so that one sequence can be played
// to two forums and their figures compared.
func DemoSteps(seed uint64, n int) []DemoStep {
	rng := rand.New(rand.NewPCG(seed, seed))
	steps := make([]DemoStep, n)
	for i := range steps {
		method, path, body := demoRequest(rng)
		steps[i] = DemoStep{Visitor: rng.IntN(demoVisitors), Method: method, Path: path, Body: body}
	}
	return steps
}

// DemoVisitors are the demo's visitors, each with a browser and a source
// address of its own.
type DemoVisitors struct{ clients []*http.Client }

// NewDemoVisitors makes the demo's visitors; Close releases their
// connections.
func NewDemoVisitors() *DemoVisitors {
	d := &DemoVisitors{clients: make([]*http.Client, demoVisitors)}
	for v := range d.clients {
		d.clients[v] = &http.Client{Transport: &http.Transport{DialContext: demoDialer(v)}}
	}
	return d
}

// Close closes the visitors' idle connections.
func (d *DemoVisitors) Close() {
	for _, c := range d.clients {
		c.CloseIdleConnections()
	}
}

// Send sends step to the forum at base and reads the answer away,
// returning its status (0 when it failed, which the demo ignores). ctx
// bounds the request, its answer read to the end included.
func (d *DemoVisitors) Send(ctx context.Context, base string, step DemoStep) int {
	var r io.Reader
	if step.Body != nil {
		b, _ := json.Marshal(step.Body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, step.Method, base+step.Path, r)
	if err != nil {
		return 0
	}
	v := step.Visitor % len(d.clients)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", fmt.Sprintf("Mozilla/5.0 (demo visitor %d) Gecko/20100101 Firefox/%d.0", v, 120+v%15))
	resp, err := d.clients[v].Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// demoDialer connects visitor v to a forum on this machine from
// 127.0.0.(10+v), the whole of 127.0.0.0/8 being the loopback's on Linux;
// where that source cannot be bound, or the forum is elsewhere, it dials
// as usual.
func demoDialer(v int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	plain := &net.Dialer{Timeout: 5 * time.Second}
	own := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(10+v))}}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return plain.DialContext(ctx, network, addr)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !(ip.IsLoopback() || ip.IsUnspecified())) {
			return plain.DialContext(ctx, network, addr)
		}
		if c, err := own.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", port)); err == nil {
			return c, nil
		}
		return plain.DialContext(ctx, network, addr)
	}
}
