package redisconn

import (
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"
)

// pipeline is one node's share of a Do on one connection. Its steps:
//
//   - send writes commands (scripts by SHA, or by source when the server
//     lacked them) and, when replicas > 0, a WAIT after them, in one flush;
//   - receive reads the commands' replies in order;
//   - receiveWait reads the WAIT's reply.
//
// round runs the three once. Commands are named by their index in cmds
// and replies, the slices of the whole Do, of which the pipeline fills in
// only its own.
type pipeline struct {
	conn     redis.Conn
	deadline time.Time
	replicas int // WAIT for this many replicas after each round; 0: no WAIT

	cmds    []Cmd
	replies []Reply
	node    []int // every command of the pipeline

	// waitErr is why a WAIT found the writes before it not replicated
	// (an error reply or too few replicas); finish gives it to every
	// command that has no error of its own.
	waitErr error
}

// left is the time left until the deadline, at least a millisecond so that
// a read past the deadline times out rather than blocks.
func (p *pipeline) left() time.Duration {
	return max(time.Until(p.deadline), time.Millisecond)
}

// send writes the commands of idx, then WAIT when replicas > 0, and
// flushes. With eval, scripts go as EVAL with their source instead of
// EVALSHA.
func (p *pipeline) send(idx []int, eval bool) error {
	for _, i := range idx {
		name, args := p.cmds[i].wire(eval)
		if err := p.conn.Send(name, args...); err != nil {
			return err
		}
	}
	if p.replicas > 0 {
		if err := p.sendWait(); err != nil {
			return err
		}
	}
	return p.conn.Flush()
}

// sendWait writes WAIT for the replicas, letting it take half the time
// left: the other half is for reading its reply and what follows.
func (p *pipeline) sendWait() error {
	ms := max(time.Until(p.deadline).Milliseconds()/2, 1)
	return p.conn.Send("WAIT", p.replicas, ms)
}

// receive reads the replies of idx, in order, into replies; an error reply
// is a command's own. Script commands answered NOSCRIPT get no reply:
// they are returned in noscript, to be sent again with their source. When
// the connection fails, err is its error and unanswered the commands of
// idx still without a reply.
func (p *pipeline) receive(idx []int) (noscript, unanswered []int, err error) {
	for n, i := range idx {
		v, err := redis.ReceiveWithTimeout(p.conn, p.left())
		switch {
		case err != nil && !isReply(err):
			return noscript, idx[n:], err
		case Classify(err) == NoScript && p.cmds[i].script != nil:
			noscript = append(noscript, i)
		default:
			p.replies[i] = Reply{Value: v, Err: err}
		}
	}
	return noscript, nil, nil
}

// receiveWait reads the reply to WAIT. An error reply, or fewer replicas
// than asked for, is kept in waitErr; the error returned is the
// connection's.
func (p *pipeline) receiveWait() error {
	got, err := redis.Int(redis.ReceiveWithTimeout(p.conn, p.left()))
	switch {
	case err != nil && !isReply(err):
		return err
	case err != nil:
		p.waitErr = err
	case got < p.replicas:
		p.waitErr = &NotReplicatedError{Want: p.replicas, Got: got}
	}
	return nil
}

// round sends idx and reads their replies, then the WAIT's. It returns the
// script commands to send again with their source. A failed connection
// gives its error to the commands it left without a reply and returns
// ok false; failing on WAIT's reply, to every command of the pipeline: not
// knowing whether the replicas have the writes is not having them.
func (p *pipeline) round(idx []int, eval bool) (noscript []int, ok bool) {
	if err := p.send(idx, eval); err != nil {
		p.fail(idx, err)
		return nil, false
	}
	noscript, unanswered, err := p.receive(idx)
	if err != nil {
		p.fail(unanswered, err)
		p.fail(noscript, err)
		return nil, false
	}
	if p.replicas > 0 {
		if err := p.receiveWait(); err != nil {
			p.fail(p.node, err)
			return nil, false
		}
	}
	return noscript, true
}

// fail gives err to the commands of idx.
func (p *pipeline) fail(idx []int, err error) {
	for _, i := range idx {
		p.replies[i] = Reply{Err: err}
	}
}

// finish gives waitErr to the commands that succeeded.
func (p *pipeline) finish() {
	if p.waitErr == nil {
		return
	}
	for _, i := range p.node {
		if p.replies[i].Err == nil {
			p.replies[i].Err = p.waitErr
		}
	}
}

// wire is the command as sent: a script by SHA, or by source with eval.
func (c Cmd) wire(eval bool) (string, []any) {
	switch {
	case c.script == nil:
		return c.Name, c.Args
	case eval:
		return "EVAL", append([]any{c.script.src}, c.Args...)
	}
	return c.Name, append([]any{c.script.hash}, c.Args...)
}

func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
