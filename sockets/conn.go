package sockets

import (
	"context"
	"net"
	"sync"
	"time"
)

// Conn is the connection of one load client (a worker): the socket, the
// raw reader and writer over it, the index of its upstream, the hook that
// interrupts its I/O when the run's context ends, and whether its server
// closes within LingerGrace. The zero Conn holds no connection; a Conn is
// used by one goroutine.
type Conn struct {
	// Conn is the connection; nil when none is open.
	net.Conn
	// IO reads and writes Conn.
	IO RawIO
	// Upstream is the index of Conn's address in a cluster dialer.
	Upstream int

	hook     *cancelHook // kept from dial to dial until Release
	noLinger bool        // the server once let LingerGrace pass
	ring     *RingSlot   // the ring slot the Conn is bound to; nil: none
}

// cancelHook interrupts the I/O of a Conn's open connection when the
// context of its dials ends, by setting a deadline in the past. It is
// registered with the context once and serves every later connection: a
// context.AfterFunc per dial would allocate and take the lock of the run's
// context, which all workers share, on every connect.
type cancelHook struct {
	done <-chan struct{} // the Done channel of the context it watches
	stop func() bool     // unregisters it from the context
	mu   sync.Mutex      // orders fire against watch, so no closed conn is touched
	conn net.Conn        // the open connection; nil between connections
	over bool            // the context has ended
}

// past is the deadline that ends any pending read or write at once.
var past = time.Unix(1, 0)

func (h *cancelHook) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.over = true
	if h.conn != nil {
		h.conn.SetDeadline(past)
	}
}

// watch makes conn (nil: none) the connection to interrupt; a context that
// has already ended interrupts it at once.
func (h *cancelHook) watch(conn net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn = conn
	if h.over && conn != nil {
		conn.SetDeadline(past)
	}
}

// Open reports whether a connection is open.
func (c *Conn) Open() bool { return c.Conn != nil }

// Dial opens a connection with d within deadline. From then on, the end of
// ctx sets a deadline in the past on it, which ends any read or write. A
// Conn bound to a ring slot (UseRing) connects, and later reads, writes and
// closes, through the ring when d allows (one address, no TLS).
func (c *Conn) Dial(ctx context.Context, d *Dialer, deadline time.Time) error {
	if done := ctx.Done(); c.hook == nil || c.hook.done != done {
		c.unhook()
		h := &cancelHook{done: done}
		h.stop = context.AfterFunc(ctx, h.fire)
		c.hook = h
	}
	var conn net.Conn
	var err error
	if c.ring != nil && d.ringable() {
		// The hook watches the connect too: a cancelled run ends it.
		c.ring.conn.SetDeadline(deadline)
		c.hook.watch(&c.ring.conn)
		conn, err = d.dialRing(ctx, deadline, c.ring)
	} else {
		conn, err = d.DialDeadline(ctx, deadline)
	}
	if err != nil {
		c.hook.watch(nil)
		return err
	}
	c.Conn = conn
	c.IO.Reset(conn)
	c.Upstream = UpstreamIndex(conn)
	c.hook.watch(conn)
	return nil
}

// UseRing binds c to slot s of a ring driver (RunOnRings), whose task is
// the only user of c from then on (nil: unbound). Takes effect at the next
// Dial.
func (c *Conn) UseRing(s *RingSlot) { c.ring = s }

// Close closes the connection, if one is open. The cancellation hook stays
// for the next Dial; Release removes it too.
func (c *Conn) Close() error {
	if c.Conn == nil {
		return nil
	}
	c.hook.watch(nil)
	err := c.Conn.Close()
	c.forget()
	return err
}

// Release closes the connection, if one is open, and unregisters the
// cancellation hook from the context: the end of the worker.
func (c *Conn) Release() error {
	err := c.Close()
	c.unhook()
	return err
}

func (c *Conn) unhook() {
	if c.hook != nil {
		c.hook.stop()
		c.hook = nil
	}
}

// CloseAfterPeer closes a connection that will not be reused after the
// server's own close, when that comes within LingerGrace (see
// RawIO.CloseAfterPeer why). A server that once let the grace pass is not
// waited for again. It reports whether the server's close was seen (the
// time it came is then just before the return).
func (c *Conn) CloseAfterPeer(buf []byte) bool {
	if c.noLinger || c.Conn == nil {
		c.Close()
		return false
	}
	c.hook.watch(nil) // the wait is bounded by LingerGrace
	closed := c.IO.CloseAfterPeer(buf)
	if !closed {
		c.noLinger = true
	}
	c.forget()
	return closed
}

func (c *Conn) forget() {
	c.Conn = nil
	c.IO.Reset(nil)
}
