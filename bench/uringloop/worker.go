package main

import (
	"errors"
	"syscall"
	"time"
	"unsafe"

	"github.com/backbench/backbench/httpprobe"
)

// Operations, in the high half of an SQE's user data; the low half is the
// connection's index.
const (
	uSocket = iota + 1
	uConnect
	uSend
	uRecv
	uClose
	uTimeout
	uCancel
)

// Phases of a connection's current request.
const (
	phHead  = iota // reading the response head
	phBody         // reading the body
	phDrain        // response complete; reading to EOF (new connection per request)
)

const bufSize = 16 << 10

// conn is one connection slot of a worker.
type conn struct {
	idx    uint64
	fd     int32
	buf    []byte
	w      int // head bytes held in buf
	phase  int
	kind   httpprobe.BodyKind
	left   int64 // body bytes left (BodyLength)
	keep   bool  // the server keeps the connection after this response
	served int   // responses on this connection
	bad    bool  // CONNECT or SEND of this chain failed
	start  time.Time
	end    time.Time
	head   httpprobe.Head
	chunks httpprobe.ChunkedDecoder
}

// worker runs one ring and its connections on one locked thread.
type worker struct {
	cfg      config
	req      []byte
	sa       addr
	conns    []conn
	r        *ring
	inflight int // SQEs submitted and not completed, the stop timeout aside
	stopping bool
	ok       int64
	failed   int64
	hist     []uint32
	ts       [2]int64 // the stop timeout (struct __kernel_timespec)
	tsDrain  [2]int64
}

func newWorker(cfg config, req []byte, sa addr, n int) *worker {
	w := &worker{cfg: cfg, req: req, sa: sa, conns: make([]conn, n)}
	if cfg.measure {
		w.hist = make([]uint32, histBuckets)
	}
	for i := range w.conns {
		w.conns[i] = conn{idx: uint64(i), fd: -1, buf: make([]byte, bufSize)}
	}
	return w
}

var errStop = errors.New("stop")

func (w *worker) run() error {
	entries := uint32(64)
	for entries < uint32(8*len(w.conns)+8) {
		entries *= 2
	}
	r, err := newRing(entries, w.cfg.defer_)
	if err != nil {
		return err
	}
	w.r = r
	r.raw = w.cfg.rawEnter
	defer r.close()
	defer w.closeAll()
	w.ts = [2]int64{int64(w.cfg.dur / time.Second), int64(w.cfg.dur % time.Second)}
	if err := w.timeout(&w.ts); err != nil {
		return err
	}
	for i := range w.conns {
		if err := w.open(&w.conns[i]); err != nil {
			return err
		}
	}
	// Every connection has an operation in flight whenever the loop waits,
	// so waiting for up to one completion per connection cannot stall.
	wait := uint32(max(1, min(w.cfg.batch, len(w.conns))))
	for {
		if w.stopping {
			wait = 1
		}
		if err := r.enter(wait); err != nil {
			return err
		}
		head := *r.cqHead
		tail := loadAcquire(r.cqTail)
		for ; head != tail; head++ {
			c := &r.cqes[head&r.cqMask]
			op, i, res := c.userData>>32, c.userData&0xffffffff, c.res
			if err := w.complete(op, i, res); err != nil {
				storeRelease(r.cqHead, head+1)
				if err == errStop {
					return nil
				}
				return err
			}
		}
		storeRelease(r.cqHead, head)
	}
}

// complete handles one completion.
func (w *worker) complete(op, i uint64, res int32) error {
	if op == uTimeout {
		if w.stopping { // the drain took too long: give up on what is left
			return errStop
		}
		w.stopping = true
		s, err := w.sqe(uCancel, 0)
		if err != nil {
			return err
		}
		s.opcode, s.fd, s.opFlags = opAsyncCancel, -1, cancelAll|cancelAny
		w.tsDrain = [2]int64{2, 0}
		return w.timeout(&w.tsDrain)
	}
	w.inflight--
	if w.stopping {
		c := &w.conns[i]
		if op == uSocket && res >= 0 {
			c.fd = res
		}
		if w.inflight == 0 {
			return errStop
		}
		return nil
	}
	if op == uCancel || op == uClose {
		return nil
	}
	c := &w.conns[i]
	switch op {
	case uSocket:
		if res < 0 {
			w.failed++
			return w.open(c)
		}
		c.fd = res
		return w.chain(c, true)
	case uConnect:
		c.bad = c.bad || res < 0
		return nil
	case uSend:
		c.bad = c.bad || res != int32(len(w.req))
		return nil
	}
	// uRecv: the last operation of a chain, always completed.
	if c.bad || res < 0 {
		return w.fail(c)
	}
	if res == 0 {
		return w.eof(c)
	}
	n := int(res)
	var p []byte
	if c.phase == phHead {
		c.w += n
		l, err := httpprobe.ParseHead(c.buf[:c.w], &c.head)
		if err == httpprobe.ErrIncomplete && c.w < len(c.buf) {
			return w.recv(c)
		}
		if err != nil {
			return w.fail(c)
		}
		c.kind = c.head.Body(false)
		c.keep = c.head.KeepsConn() && c.kind != httpprobe.BodyClose
		c.left = c.head.ContentLength
		c.chunks.Reset()
		c.phase = phBody
		p = c.buf[l:c.w]
	} else {
		p = c.buf[:n]
	}
	if c.phase == phDrain {
		return w.fail(c) // bytes after the response
	}
	done, err := c.body(p)
	if err != nil {
		return w.fail(c)
	}
	if !done {
		return w.recv(c)
	}
	return w.responded(c)
}

// body counts body bytes and reports whether the body is complete.
func (c *conn) body(p []byte) (bool, error) {
	switch c.kind {
	case httpprobe.BodyNone:
		if len(p) > 0 {
			return false, errors.New("bytes after a bodyless response")
		}
		return true, nil
	case httpprobe.BodyLength:
		if int64(len(p)) > c.left {
			return false, errors.New("bytes after the body")
		}
		c.left -= int64(len(p))
		return c.left == 0, nil
	case httpprobe.BodyChunked:
		for len(p) > 0 && !c.chunks.Done() {
			n, _, err := c.chunks.Step(p)
			if err != nil {
				return false, err
			}
			p = p[n:]
		}
		if len(p) > 0 {
			return false, errors.New("bytes after the last chunk")
		}
		return c.chunks.Done(), nil
	}
	return false, nil // BodyClose: complete at EOF
}

// responded: the response is complete.
func (w *worker) responded(c *conn) error {
	if w.cfg.measure {
		c.end = time.Now()
	}
	c.served++
	if !w.cfg.keepAlive {
		c.phase = phDrain
		return w.recv(c)
	}
	w.record(c)
	if !c.keep {
		return w.reopen(c)
	}
	if w.cfg.measure {
		c.start = c.end
	}
	return w.chain(c, false)
}

// eof: the server closed the connection.
func (w *worker) eof(c *conn) error {
	switch {
	case c.phase == phDrain:
		w.record(c)
		return w.reopen(c)
	case c.phase == phBody && c.kind == httpprobe.BodyClose:
		if w.cfg.measure {
			c.end = time.Now()
		}
		w.record(c)
		return w.reopen(c)
	case c.phase == phHead && c.w == 0 && c.served > 0:
		// A kept connection the server closed between requests: redial
		// and resend, as backbench does.
		return w.reopen(c)
	}
	return w.fail(c)
}

func (w *worker) record(c *conn) {
	w.ok++
	if w.cfg.measure {
		us := c.end.Sub(c.start) / time.Microsecond
		w.hist[min(int(us), histBuckets-1)]++
	}
}

func (w *worker) fail(c *conn) error {
	w.failed++
	return w.reopen(c)
}

// reopen closes the connection and starts the next one.
func (w *worker) reopen(c *conn) error {
	if c.fd >= 0 {
		s, err := w.sqe(uClose, c.idx)
		if err != nil {
			return err
		}
		s.opcode, s.fd = opClose, c.fd
		c.fd = -1
	}
	return w.open(c)
}

// open starts a new connection and its first request.
func (w *worker) open(c *conn) error {
	c.served = 0
	if w.cfg.measure {
		c.start = time.Now()
	}
	if w.cfg.socketOp {
		s, err := w.sqe(uSocket, c.idx)
		if err != nil {
			return err
		}
		s.opcode, s.fd, s.off = opSocket, int32(w.sa.family), syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC
		return nil
	}
	fd, err := syscall.Socket(w.sa.family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	c.fd = int32(fd)
	return w.chain(c, true)
}

// chain queues a request: CONNECT (on a new connection) linked to SEND
// linked to RECV.
func (w *worker) chain(c *conn, connect bool) error {
	c.bad, c.w, c.phase = false, 0, phHead
	if connect {
		s, err := w.sqe(uConnect, c.idx)
		if err != nil {
			return err
		}
		s.opcode, s.flags, s.fd = opConnect, sqeIOLink, c.fd
		s.addr, s.off = uint64(uintptr(unsafe.Pointer(&w.sa.raw[0]))), uint64(len(w.sa.raw))
	}
	s, err := w.sqe(uSend, c.idx)
	if err != nil {
		return err
	}
	s.opcode, s.flags, s.fd = opSend, sqeIOLink, c.fd
	s.addr, s.len, s.opFlags = uint64(uintptr(unsafe.Pointer(&w.req[0]))), uint32(len(w.req)), syscall.MSG_NOSIGNAL
	return w.recv(c)
}

// recv queues a RECV into the free part of the buffer: after the head bytes
// while the head is incomplete, else from the start.
func (w *worker) recv(c *conn) error {
	s, err := w.sqe(uRecv, c.idx)
	if err != nil {
		return err
	}
	off := 0
	if c.phase == phHead {
		off = c.w
	}
	s.opcode, s.fd = opRecv, c.fd
	s.addr, s.len = uint64(uintptr(unsafe.Pointer(&c.buf[off]))), uint32(len(c.buf)-off)
	return nil
}

// sqe returns a zeroed SQE carrying op and the connection index.
func (w *worker) sqe(op, idx uint64) (*sqe, error) {
	s, err := w.r.get()
	if err != nil {
		return nil, err
	}
	s.userData = op<<32 | idx
	if op != uTimeout {
		w.inflight++
	}
	return s, nil
}

// timeout queues a relative IORING_OP_TIMEOUT of ts.
func (w *worker) timeout(ts *[2]int64) error {
	s, err := w.sqe(uTimeout, 0)
	if err != nil {
		return err
	}
	s.opcode, s.addr, s.len = opTimeout, uint64(uintptr(unsafe.Pointer(ts))), 1
	return nil
}

// closeAll closes the connections' sockets when the loop ends.
func (w *worker) closeAll() {
	for i := range w.conns {
		if w.conns[i].fd >= 0 {
			syscall.Close(int(w.conns[i].fd))
			w.conns[i].fd = -1
		}
	}
}
