// Package redisconn is what Pulse's packages share about talking to Redis,
// on one server or a Redis Cluster alike: the Pool they are given, a
// Router that runs pipelines split per cluster node, Lua scripts sent by
// SHA, WAIT for replicas, the sorting of errors into what to do about
// them, and Timeout, the bound of a call made under a context.
//
// # A pool
//
// A Pool hands out connections. The caller makes it and closes it: a
// *redis.Pool for one server, a *redisc.Cluster for a cluster.
//
//	pool := &redis.Pool{Dial: func() (redis.Conn, error) {
//		return redis.Dial("tcp", "localhost:6379")
//	}}
//	defer pool.Close()
//
// # A router
//
// A Router runs commands over the pool. It is safe for concurrent use and
// made once per pool; it does no I/O until used.
//
//	r := redisconn.NewRouter(pool)
//
// # Sending a pipeline
//
// Do takes the commands of a pipeline and returns one Reply per command,
// in order. Each Cmd names the Key that routes it: on a cluster, commands
// are grouped by the node serving their key's slot, each node's group is
// written in one go and the nodes run at once, so every key one command
// names must share a slot.
//
//	replies := r.Do([]redisconn.Cmd{
//		{Key: "hits", Name: "INCR", Args: []any{"hits"}},
//		{Key: "seen", Name: "SADD", Args: []any{"seen", "alice"}},
//	}, redisconn.Options{Timeout: time.Second})
//	n, err := redis.Int(replies[0].Value, replies[0].Err)
//
// Options.Timeout bounds the whole call (2 s by default). Under a context,
// DoContext returns as soon as the context ends; Timeout gives the time a
// call may take under a context, for calls made some other way:
//
//	t, err := redisconn.Timeout(ctx, 2*time.Second) // 2 s, or less if ctx ends sooner
//	if err != nil {
//		return err // ctx's deadline has passed
//	}
//	v, err := redis.DoWithTimeout(conn, t, "GET", "k")
//
// # Scripts
//
// NewScript makes a Lua script once, at start; its Cmd is a call with keys
// and arguments, routed by its first key.
//
//	var incrBy = redisconn.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)
//
//	replies := r.Do([]redisconn.Cmd{incrBy.Cmd([]string{"hits"}, 5)}, redisconn.Options{})
//
// A script goes as EVALSHA, its SHA-1 only. A server that does not have it
// (a restart, a SCRIPT FLUSH, a node that just took over a slot) answers
// NOSCRIPT; the router then sends it again, on the same connection in the
// same call, as EVAL with its source, which the server keeps. The caller
// sees the script's result either way.
//
// # Waiting for replicas
//
// With Options.WaitReplicas > 0 each node's commands are followed by a WAIT
// for that many replicas, taking at most half the call's time left.
//
//	replies := r.Do(cmds, redisconn.Options{WaitReplicas: 1})
//	var nr *redisconn.NotReplicatedError
//	if errors.As(replies[0].Err, &nr) {
//		// on the master, maybe not on nr.Want replicas: write it again
//	}
//
// Commands that succeeded on a node whose WAIT saw too few replicas
// acknowledge them get a *NotReplicatedError: their effect may be lost
// with the master, so a caller that must keep them writes them again,
// which is why Pulse's writes are idempotent.
//
// # Errors
//
// A Reply's Err is the command's own error reply or, when the connection
// failed, the connection's error; then what the command did is unknown,
// unless Unsent says it never left the process. Classify says what to do
// about an error:
//
//	switch redisconn.Classify(rep.Err) {
//	case redisconn.OK:
//	case redisconn.KeyPermanent:
//		// WRONGTYPE, a value that is not an integer: this key will always fail
//	case redisconn.Transient:
//		// full, read-only, loading, busy, a slot moving, a connection lost:
//		// keep the write, back off, try again
//	}
//
// Unknown error replies are Transient, so a surprise keeps data instead of
// dropping it. IsRouting picks out the errors that say the cluster's
// layout changed or a node is gone.
//
// # How a call runs
//
// Do groups the commands by node, from a slot map read with CLUSTER SLOTS
// when first needed. Each node's commands make a pipeline on one
// connection, bound to that node:
//
//  1. send: every command, scripts by SHA, then WAIT when asked; one flush.
//  2. receive: the replies, in order. A script answered NOSCRIPT is put
//     aside. A reply error belongs to its command; a connection error
//     ends the pipeline, failing the commands still without a reply.
//  3. receive WAIT's reply: too few replicas, or an error reply, will be
//     every successful command's error; a connection error fails all of
//     the node's commands, since not knowing whether the replicas have
//     them is not having them.
//  4. When scripts were put aside, a second round sends them as EVAL with
//     their source, then WAIT again, and receives as in 2 and 3.
//
// Every read is bounded by the call's deadline. When any reply says MOVED,
// ASK, TRYAGAIN, CLUSTERDOWN, READONLY or MASTERDOWN, or a node could not
// be reached, the router marks its slot map stale: the next call has the
// cluster client refresh its layout and reads CLUSTER SLOTS again. The
// router does not follow redirections itself: the caller, whose writes
// are idempotent, retries them, and the retry goes to the new node.
package redisconn
