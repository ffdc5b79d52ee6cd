package sockets

import (
	"context"
	"net"
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

	stop     func() bool // unregisters the cancellation hook
	noLinger bool        // the server once let LingerGrace pass
}

// Open reports whether a connection is open.
func (c *Conn) Open() bool { return c.Conn != nil }

// Dial opens a connection with d within deadline. From then on, the end of
// ctx sets a deadline in the past on it, which ends any read or write.
func (c *Conn) Dial(ctx context.Context, d *Dialer, deadline time.Time) error {
	conn, err := d.DialDeadline(ctx, deadline)
	if err != nil {
		return err
	}
	c.Conn = conn
	c.IO.Reset(conn)
	c.Upstream = UpstreamIndex(conn)
	c.stop = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	return nil
}

// Close closes the connection, if one is open.
func (c *Conn) Close() error {
	if c.Conn == nil {
		return nil
	}
	c.stop()
	err := c.Conn.Close()
	c.forget()
	return err
}

// CloseAfterPeer closes a connection that will not be reused after the
// server's own close, when that comes within LingerGrace (see
// RawIO.CloseAfterPeer why). A server that once let the grace pass is not
// waited for again.
func (c *Conn) CloseAfterPeer(buf []byte) {
	if c.noLinger || c.Conn == nil {
		c.Close()
		return
	}
	c.stop()
	if !c.IO.CloseAfterPeer(buf) {
		c.noLinger = true
	}
	c.forget()
}

func (c *Conn) forget() {
	c.Conn, c.stop = nil, nil
	c.IO.Reset(nil)
}
