package timeseries_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// The salt is in its own key and nowhere else: no other key's name or
// value, no log line, no error, no Health answer, even when something
// goes wrong and gets reported.
func TestVisitorsSaltStaysSecret(t *testing.T) {
	srv := redistest.Start(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	var errs []string
	r := readyRecorder(t, srv, timeseries.Config{OnError: func(err error) {
		mu.Lock()
		errs = append(errs, err.Error())
		mu.Unlock()
	}})
	hits := mustCounter(t, r, "hits")
	route := mustCounter(t, r, "GET /posts/:id")
	bad, _ := series.Keys{}.VisitorKey(86400, "GET /posts/:id", (srvTime(t, srv)/86400)*86400)
	srv.Do("SET", bad, "x") // a refused key: logged and reported
	for i := range 200 {
		visit(r, addrOf(i), hits, route)
	}
	_ = r.Flush(canceledAfter(t, 5e9))

	salts, err := redis.Strings(srv.Do("KEYS", "pulse:salt:*"), nil)
	if err != nil || len(salts) == 0 {
		t.Fatalf("salt keys: %v, %v", salts, err)
	}
	var secrets [][]byte
	for _, k := range salts {
		v, _ := redis.Bytes(srv.Do("GET", k), nil)
		raw, err := hex.DecodeString(string(v))
		if err != nil || len(raw) != 32 {
			t.Fatalf("salt key %s holds %d bytes that are not a hex salt", k, len(v))
		}
		secrets = append(secrets, v, raw, []byte(strings.ToUpper(string(v))))
	}
	keys, _ := redis.Strings(srv.Do("KEYS", "*"), nil)
	checked := 0
	for _, k := range keys {
		if strings.HasPrefix(k, "pulse:salt:") {
			continue
		}
		dump, _ := redis.Bytes(srv.Do("DUMP", k), nil)
		checked++
		for _, s := range secrets {
			if bytes.Contains([]byte(k), s) || bytes.Contains(dump, s) {
				t.Errorf("key %q (name or value) holds a salt", k)
			}
		}
	}
	health, _ := json.Marshal(r.Health())
	mu.Lock()
	out := logs.String() + strings.Join(errs, "\n") + string(health)
	mu.Unlock()
	if !strings.Contains(out, bad) {
		t.Errorf("the refused key was not reported; output: %s", out)
	}
	for _, s := range secrets {
		if strings.Contains(out, string(s)) {
			t.Errorf("a salt appears in the logs, errors or health: %s", out)
		}
	}
	if checked < 5 {
		t.Errorf("only %d keys besides the salts", checked)
	}
}

func srvTime(t *testing.T, srv *redistest.Server) int64 {
	v, err := redis.Int64s(srv.Do("TIME"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return 0, errors.New("closed")
	}
	return l.w.Write(p)
}
