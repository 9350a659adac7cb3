package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LoadResult is what one load run measured from the client side.
type LoadResult struct {
	Requests int64         // responses received
	Duration time.Duration // how long the load ran
	RPS      float64       // responses per second
	P50, P99 time.Duration // latency percentiles
	Errors   int64         // socket errors and responses other than 2xx/3xx
	// ClientCPU is the CPU time the load generator used, when it ran as
	// a process of its own (wrk); 0 otherwise.
	ClientCPU time.Duration
}

// LoadSpec is one load: Connections keep-alive connections for Duration,
// each sending its next request when the last is answered, after Pause
// (0: at once, as fast as the server answers).
type LoadSpec struct {
	Connections int
	Duration    time.Duration
	Pause       time.Duration
}

// A Loader sends GET requests to url as spec says.
type Loader interface {
	Load(ctx context.Context, url string, spec LoadSpec) (LoadResult, error)
}

// Wrk runs Debian's wrk with --latency.
type Wrk struct {
	Threads int // wrk -t
}

// Load runs wrk once. A Pause is rounded to whole milliseconds, wrk's
// resolution, at least 1.
func (w Wrk) Load(ctx context.Context, url string, spec LoadSpec) (LoadResult, error) {
	threads := max(w.Threads, 1)
	// wrk wants at least one connection per thread.
	connections := max(spec.Connections, threads)
	secs := max(int(spec.Duration.Round(time.Second)/time.Second), 1)
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(connections), "-d", strconv.Itoa(secs) + "s", "--latency"}
	if spec.Pause > 0 {
		script, err := os.CreateTemp("", "loadbench-*.lua")
		if err != nil {
			return LoadResult{}, fmt.Errorf("bench: wrk script: %w", err)
		}
		defer os.Remove(script.Name())
		ms := max(spec.Pause.Round(time.Millisecond).Milliseconds(), 1)
		_, err = fmt.Fprintf(script, "function delay()\n  return %d\nend\n", ms)
		if cerr := script.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return LoadResult{}, fmt.Errorf("bench: wrk script: %w", err)
		}
		args = append(args, "-s", script.Name())
	}
	cmd := exec.CommandContext(ctx, "wrk", append(args, url)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return LoadResult{}, fmt.Errorf("bench: wrk: %w: %s%s", err, out.String(), stderr.String())
	}
	res, err := ParseWrk(out.String())
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.ClientCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return res, err
}

var (
	wrkTotal   = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([0-9.]+[a-z]+),`)
	wrkRPS     = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkPercent = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+[a-z]+)\s*$`)
	wrkSocket  = regexp.MustCompile(`(?m)Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkNon2xx  = regexp.MustCompile(`(?m)Non-2xx or 3xx responses: (\d+)`)
)

// ParseWrk reads the output of `wrk --latency`.
func ParseWrk(out string) (LoadResult, error) {
	var r LoadResult
	m := wrkTotal.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("bench: wrk output has no request total:\n%s", out)
	}
	r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	d, err := parseWrkTime(m[2])
	if err != nil {
		return r, err
	}
	r.Duration = d
	m = wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("bench: wrk output has no Requests/sec:\n%s", out)
	}
	if r.RPS, err = strconv.ParseFloat(m[1], 64); err != nil {
		return r, fmt.Errorf("bench: wrk Requests/sec: %w", err)
	}
	ps := wrkPercent.FindAllStringSubmatch(out, -1)
	if len(ps) != 2 {
		return r, fmt.Errorf("bench: wrk output has no 50%%/99%% latency (run it with --latency):\n%s", out)
	}
	for _, p := range ps {
		d, err := parseWrkTime(p[2])
		if err != nil {
			return r, err
		}
		if p[1] == "50" {
			r.P50 = d
		} else {
			r.P99 = d
		}
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.Errors += n
		}
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		r.Errors += n
	}
	return r, nil
}

// parseWrkTime reads wrk's times: "812.00us", "1.25ms", "6.00s", "1.00m".
func parseWrkTime(s string) (time.Duration, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' })
	if i <= 0 {
		return 0, fmt.Errorf("bench: wrk time %q", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("bench: wrk time %q: %w", s, err)
	}
	units := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour}
	u, ok := units[s[i:]]
	if !ok {
		return 0, fmt.Errorf("bench: wrk time %q: unknown unit", s)
	}
	return time.Duration(v * float64(u)), nil
}

// GoClient is a Loader in Go, for tests on machines without wrk: one
// goroutine per connection, each sending its next request when the last
// one is answered, as wrk does.
type GoClient struct{}

// Load sends requests until spec.Duration has passed.
func (GoClient) Load(ctx context.Context, url string, spec LoadSpec) (LoadResult, error) {
	connections := max(spec.Connections, 1)
	tr := &http.Transport{MaxIdleConnsPerHost: connections, MaxConnsPerHost: connections}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, spec.Duration)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int64
		firstErr  error
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range connections {
		wg.Go(func() {
			var mine []time.Duration
			var bad int64
			var err error
			for ctx.Err() == nil {
				t := time.Now()
				if err = get(client, url); err != nil {
					if ctx.Err() == nil {
						bad++
					}
					continue
				}
				mine = append(mine, time.Since(t))
				if spec.Pause > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(spec.Pause):
					}
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			errs += bad
			if bad > 0 && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(latencies) == 0 {
		return LoadResult{}, fmt.Errorf("bench: no request answered: %w", errors.Join(firstErr, context.Cause(ctx)))
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	return LoadResult{
		Requests: int64(len(latencies)),
		Duration: elapsed,
		RPS:      float64(len(latencies)) / elapsed.Seconds(),
		P50:      pct(0.50),
		P99:      pct(0.99),
		Errors:   errs,
	}, nil
}

// get sends one request; the request is not bound to the load's context,
// so the run's end never cuts one off half way.
func get(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, bufio.NewReader(resp.Body)); err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
