package redisconn

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

var incrScript = NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)

// newPipeline is a pipeline over a fresh connection to srv for cmds, every
// one of them its own, with a second to run. A kill in cmds becomes a
// command that makes the server close that connection once it has
// answered it.
func newPipeline(t *testing.T, srv *redistest.Server, cmds []Cmd, replicas int) *pipeline {
	t.Helper()
	conn, err := srv.Pool().Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	idx := make([]int, len(cmds))
	for i := range idx {
		idx[i] = i
	}
	id, err := redis.Int64(conn.Do("CLIENT", "ID"))
	if err != nil {
		t.Fatal(err)
	}
	cmds = slices.Clone(cmds)
	for i, c := range cmds {
		if c.Name == kill.Name {
			cmds[i] = Cmd{Name: "CLIENT", Args: []any{"KILL", "ID", id, "SKIPME", "no"}}
		}
	}
	return &pipeline{
		conn: conn, deadline: time.Now().Add(time.Second), replicas: replicas,
		cmds: cmds, replies: make([]Reply, len(cmds)), node: idx,
	}
}

var kill = Cmd{Name: "kill"}

func set(k, v string) Cmd { return Cmd{Key: k, Name: "SET", Args: []any{k, v}} }
func get(k string) Cmd    { return Cmd{Key: k, Name: "GET", Args: []any{k}} }
func incr(k string) Cmd   { return Cmd{Key: k, Name: "INCR", Args: []any{k}} }

// The steps one at a time: send then receive, and receiveWait when the
// pipeline asks for replicas.
func TestPipelineSteps(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name     string
		loaded   bool // the server has incrScript
		cmds     []Cmd
		eval     bool
		replicas int

		want       []any // each command's reply, as a string, or "ERR" for an error reply
		noscript   []int
		unanswered []int
		waitErr    string // "" or the WAIT error's text
	}{
		{name: "plain commands", cmds: []Cmd{set("a", "1"), incr("a"), get("a")},
			want: []any{"OK", "2", "2"}},
		{name: "an error reply is the command's own", cmds: []Cmd{set("s", "x"), incr("s"), get("s")},
			want: []any{"OK", "ERR", "x"}},
		{name: "a script the server has, by SHA", loaded: true, cmds: []Cmd{incrScript.Cmd([]string{"n"}, 3)},
			want: []any{"3"}},
		{name: "a script the server lacks, by SHA", cmds: []Cmd{get("z"), incrScript.Cmd([]string{"n"}, 3)},
			want: []any{nil, nil}, noscript: []int{1}},
		{name: "a script by source", eval: true, cmds: []Cmd{incrScript.Cmd([]string{"n"}, 4)},
			want: []any{"4"}},
		{name: "the connection closes midway", cmds: []Cmd{set("a", "1"), kill, get("a"), get("a")},
			want: []any{"OK", "1", nil, nil}, unanswered: []int{2, 3}},
		{name: "WAIT with no replica there", cmds: []Cmd{set("a", "1")}, replicas: 1,
			want: []any{"OK"}, waitErr: "redisconn: WAIT: 0 of 1 replicas acknowledged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			srv.Do("SCRIPT", "FLUSH")
			if tt.loaded {
				srv.Do("SCRIPT", "LOAD", incrScript.src)
			}
			p := newPipeline(t, srv, tt.cmds, tt.replicas)
			if err := p.send(p.node, tt.eval); err != nil {
				t.Fatalf("send: %v", err)
			}
			noscript, unanswered, err := p.receive(p.node)
			if (err != nil) != (unanswered != nil) {
				t.Errorf("receive: error %v with unanswered %v", err, unanswered)
			}
			if !slices.Equal(noscript, tt.noscript) || !slices.Equal(unanswered, tt.unanswered) {
				t.Errorf("receive: noscript %v, unanswered %v; want %v, %v", noscript, unanswered, tt.noscript, tt.unanswered)
			}
			for i, want := range tt.want {
				if got := replyText(p.replies[i]); got != want {
					t.Errorf("reply %d: %v, want %v", i, got, want)
				}
			}
			if tt.replicas == 0 {
				return
			}
			if err := p.receiveWait(); err != nil {
				t.Fatalf("receiveWait: %v", err)
			}
			var nr *NotReplicatedError
			if p.waitErr == nil || p.waitErr.Error() != tt.waitErr || !errors.As(p.waitErr, &nr) {
				t.Errorf("waitErr %v, want %q", p.waitErr, tt.waitErr)
			}
		})
	}
}

// A round fails the commands a broken connection left without a reply: on
// a reply, those after it and the scripts waiting to be sent by source;
// on WAIT's reply, all of the pipeline's.
func TestPipelineRoundFailures(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name     string
		cmds     []Cmd
		replicas int
		failed   []bool // per command
	}{
		{name: "after a reply", cmds: []Cmd{set("a", "1"), incrScript.Cmd([]string{"n"}, 1), kill, get("a")},
			failed: []bool{false, true, false, true}},
		{name: "on WAIT's reply", cmds: []Cmd{set("a", "1"), get("a"), kill}, replicas: 1,
			failed: []bool{true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Do("SCRIPT", "FLUSH")
			p := newPipeline(t, srv, tt.cmds, tt.replicas)
			_, ok := p.round(p.node, false)
			if ok {
				t.Fatal("round on a connection killed midway: ok")
			}
			for i, want := range tt.failed {
				if got := p.replies[i].Err != nil && !isReply(p.replies[i].Err); got != want {
					t.Errorf("command %d (%s): failed %v, want %v (%+v)", i, p.cmds[i].Name, got, want, p.replies[i])
				}
			}
		})
	}
}

// finish gives a WAIT's shortfall to the commands that succeeded, not to
// those with an error of their own.
func TestPipelineFinish(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do("SET", "s", "x")
	p := newPipeline(t, srv, []Cmd{set("a", "1"), incr("s")}, 1)
	// WAIT gets half the time left and its reply the other half: 1 s of
	// slack for a loaded machine, where 100 ms was sometimes too little.
	p.deadline = time.Now().Add(2 * time.Second)
	if _, ok := p.round(p.node, false); !ok {
		t.Fatalf("round: %+v", p.replies)
	}
	p.finish()
	var nr *NotReplicatedError
	if !errors.As(p.replies[0].Err, &nr) {
		t.Errorf("SET: %v, want a NotReplicatedError", p.replies[0].Err)
	}
	if Classify(p.replies[1].Err) != KeyPermanent {
		t.Errorf("INCR of a string: %v, want its own error", p.replies[1].Err)
	}
}

func TestCmdWire(t *testing.T) {
	tests := []struct {
		cmd  Cmd
		eval bool
		name string
		arg0 any
	}{
		{get("k"), false, "GET", "k"},
		{get("k"), true, "GET", "k"},
		{incrScript.Cmd([]string{"k"}, 1), false, "EVALSHA", incrScript.hash},
		{incrScript.Cmd([]string{"k"}, 1), true, "EVAL", incrScript.src},
	}
	for _, tt := range tests {
		name, args := tt.cmd.wire(tt.eval)
		if name != tt.name || len(args) == 0 || args[0] != tt.arg0 {
			t.Errorf("%s (eval %v): %s %v, want %s %v ...", tt.cmd.Name, tt.eval, name, args, tt.name, tt.arg0)
		}
	}
}

// replyText is a reply as a string, "ERR" for an error reply, nil for none.
func replyText(r Reply) any {
	switch {
	case r.Err != nil && isReply(r.Err):
		return "ERR"
	case r.Err != nil:
		return r.Err.Error()
	case r.Value == nil:
		return nil
	}
	if b, ok := r.Value.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(r.Value)
}
