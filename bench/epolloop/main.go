// Command epolloop is a prototype HTTP/1.1 load loop in wrk's design, made to
// measure what an event loop per OS thread would save backbench. Each of T threads (runtime.LockOSThread; GOMAXPROCS or -t)
// owns C/T connections as raw non-blocking sockets and its own epoll
// instance, registered once per connection, edge-triggered, for input,
// output and the peer's close. No runtime poller, no goroutine per
// connection: the thread waits in epoll_wait and reads, writes, connects
// and closes with plain system calls.
//
// It sends backbench's own request bytes (httpprobe.BuildRequest) and parses
// the response head with httpprobe.ParseHead; the body (Content-Length,
// chunked or to the close) is counted, never copied. With -k the connection
// is kept: write, wait readable, read, next. Without it every request has
// its own connection (Connection: close): socket, connect, write, read the
// response, then wait for the server's close so that TIME_WAIT stays on the
// server, as backbench and ab do, then close and reconnect.
//
// With -measure (the default) each request reads the monotonic clock at its
// start and end (load.Now, backbench's clock) and adds its latency to a
// preallocated per-thread histogram, the least backbench records per
// request; -measure=false is the pure loop.
//
// Usage: epolloop [-c N] [-d DURATION] [-t THREADS] [-k] [-measure=false] URL
// with URL http://127.0.0.1:PORT/path or http://unix:/path.sock:/path. It
// prints "requests N", "failed N" and "Requests/sec X" like bench/bareloop.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

func main() {
	conns := flag.Int("c", 10, "connections")
	dur := flag.Duration("d", 4*time.Second, "duration")
	threads := flag.Int("t", runtime.GOMAXPROCS(0), "threads, each with its own epoll")
	keep := flag.Bool("k", false, "keep connections alive")
	measure := flag.Bool("measure", true, "read the clock per request and record the latency")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: epolloop [-c N] [-d DURATION] [-t THREADS] [-k] [-measure=false] URL")
		os.Exit(2)
	}
	cfg, err := newConfig(flag.Arg(0), *keep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "epolloop:", err)
		os.Exit(2)
	}
	if *conns < 1 || *threads < 1 || *dur <= 0 {
		fmt.Fprintln(os.Stderr, "epolloop: -c, -t and -d must be positive")
		os.Exit(2)
	}
	cfg.measure = *measure
	var stop atomic.Bool
	time.AfterFunc(*dur, func() { stop.Store(true) })
	start := time.Now()
	tot := run(cfg, *conns, *threads, &stop)
	el := time.Since(start).Seconds()
	fmt.Printf("requests %d\nfailed %d\nnon-2xx %d\nbytes %d\nRequests/sec %.2f\n",
		tot.ok, tot.failed, tot.non2xx, tot.bytes, float64(tot.ok)/el)
	if cfg.measure {
		fmt.Printf("latency p50 %d us\n", tot.p50())
	}
	if tot.ok == 0 {
		os.Exit(1)
	}
}

// config is what every thread shares: where to connect and what to send.
type config struct {
	family  int
	sa      func() syscall.Sockaddr // a new one for each thread (Connect writes into it)
	req     []byte
	keep    bool
	measure bool
}

// newConfig parses an http URL (TCP or nginx-style Unix socket) and encodes
// the request backbench sends for it.
func newConfig(rawURL string, keep bool) (*config, error) {
	tg, err := sockets.ParseTarget(rawURL)
	if err != nil {
		return nil, err
	}
	if tg.Scheme != sockets.SchemeHTTP {
		return nil, fmt.Errorf("scheme %q: only http is supported", tg.Scheme)
	}
	req, err := httpprobe.BuildRequest(httpprobe.Config{Target: tg, KeepAlive: keep})
	if err != nil {
		return nil, err
	}
	cfg := &config{req: req, keep: keep}
	if tg.Network == "unix" {
		cfg.family = syscall.AF_UNIX
		cfg.sa = func() syscall.Sockaddr { return &syscall.SockaddrUnix{Name: tg.Address} }
		return cfg, nil
	}
	a, err := net.ResolveTCPAddr("tcp", tg.Address)
	if err != nil {
		return nil, err
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		cfg.family = syscall.AF_INET
		cfg.sa = func() syscall.Sockaddr {
			sa := &syscall.SockaddrInet4{Port: a.Port}
			copy(sa.Addr[:], ip4)
			return sa
		}
	} else {
		cfg.family = syscall.AF_INET6
		cfg.sa = func() syscall.Sockaddr {
			sa := &syscall.SockaddrInet6{Port: a.Port}
			copy(sa.Addr[:], a.IP.To16())
			return sa
		}
	}
	return cfg, nil
}

// histBuckets is the size of a thread's latency histogram: one bucket per
// microsecond, the last one holding everything slower.
const histBuckets = 1 << 16

// totals are the counts of one thread, or of all once merged.
type totals struct {
	ok, failed, non2xx, bytes int64
	hist                      []uint32
}

func (t *totals) add(o *totals) {
	t.ok += o.ok
	t.failed += o.failed
	t.non2xx += o.non2xx
	t.bytes += o.bytes
	if o.hist != nil {
		if t.hist == nil {
			t.hist = make([]uint32, histBuckets)
		}
		for i, n := range o.hist {
			t.hist[i] += n
		}
	}
}

// p50 is the median latency in microseconds, from the histogram.
func (t *totals) p50() int {
	var seen int64
	for i, n := range t.hist {
		seen += int64(n)
		if seen*2 >= t.ok {
			return i
		}
	}
	return 0
}

// run starts the threads, spreads conns over them and returns their merged
// counts once stop is set and every thread has ended.
func run(cfg *config, conns, threads int, stop *atomic.Bool) totals {
	threads = min(threads, conns)
	res := make([]totals, threads)
	var wg sync.WaitGroup
	for i := range threads {
		n := conns / threads
		if i < conns%threads {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			res[i] = newWorker(cfg, n).loop(stop)
		}()
	}
	wg.Wait()
	var tot totals
	for i := range res {
		tot.add(&res[i])
	}
	return tot
}

// Connection states.
const (
	stRestart = iota // to (re)start at the next turn of the loop
	stWriting        // request (partly) unwritten: wait writable
	stHead           // reading the response head
	stBody           // reading the response body
	stDone           // response read, not yet counted
	stEOF            // response counted, waiting for the server's close
)

// headCap is the per-connection buffer for the response head (and the body
// bytes read with it); the body is then read into the thread's buffer.
const headCap = 8 << 10

var (
	errEOF      = errors.New("connection closed before the end of the response")
	errTrailing = errors.New("bytes after the response")
	errHeadSize = errors.New("response head too large")
)

// conn is one connection of a thread and where its current request is.
type conn struct {
	fd      int
	events  uint32 // what fd is registered for in the thread's epoll (0: not yet)
	state   uint8
	closing bool // the connection ends after this response
	wpos    int
	hlen    int
	kind    httpprobe.BodyKind
	left    int64
	status  int
	start   int64
	chunked httpprobe.ChunkedDecoder
	head    []byte
}

// worker is one thread's event loop.
type worker struct {
	cfg    *config
	sa     syscall.Sockaddr
	ep     int
	conns  []conn
	events []syscall.EpollEvent
	buf    []byte // where body bytes are read (and dropped)
	// restarts counts the connections in stRestart: failed, to be
	// reconnected 10 ms later (the clock is read only then).
	restarts int
	totals
}

func newWorker(cfg *config, n int) *worker {
	w := &worker{cfg: cfg, sa: cfg.sa(), conns: make([]conn, n), events: make([]syscall.EpollEvent, n), buf: make([]byte, 64<<10)}
	if cfg.measure {
		w.hist = make([]uint32, histBuckets)
	}
	for i := range w.conns {
		w.conns[i] = conn{fd: -1, head: make([]byte, headCap)}
	}
	w.restarts = n // every connection starts as a restart, at once
	return w
}

// loop runs requests on every connection of the thread until stop is set.
func (w *worker) loop(stop *atomic.Bool) totals {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		w.failed++
		return w.totals
	}
	w.ep = ep
	defer syscall.Close(ep)
	for !stop.Load() {
		timeout := 100
		if w.restarts > 0 {
			timeout = 10
			w.restart()
		}
		n, err := syscall.EpollWait(w.ep, w.events, timeout)
		if err != nil && err != syscall.EINTR {
			w.failed++
			break
		}
		for _, ev := range w.events[:max(n, 0)] {
			w.event(int(ev.Fd), ev.Events)
		}
	}
	for i := range w.conns {
		if w.conns[i].fd >= 0 {
			syscall.Close(w.conns[i].fd)
		}
	}
	return w.totals
}

// begin starts a request on connection i: on its kept connection, or on a
// new one.
func (w *worker) begin(i int) {
	c := &w.conns[i]
	if w.cfg.measure {
		c.start = load.Now()
	}
	c.wpos, c.hlen, c.left, c.status = 0, 0, 0, 0
	c.chunked.Reset()
	if c.fd >= 0 {
		c.state = stWriting
		w.send(i)
		return
	}
	fd, err := syscall.Socket(w.cfg.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		w.fail(i)
		return
	}
	c.fd, c.events = fd, 0
	// A TCP connect answers EINPROGRESS, but on loopback the handshake is
	// usually over by then: write at once. A connection still in SYN_SENT
	// answers EAGAIN (and a refused one its error), so no
	// getsockopt(SO_ERROR) is needed.
	if err := syscall.Connect(fd, w.sa); err != nil && err != syscall.EINPROGRESS {
		w.fail(i)
		return
	}
	c.state = stWriting
	w.send(i)
}

// watch registers connection i with the thread's epoll for events (always
// edge-triggered, with the peer's close), if not done yet.
func (w *worker) watch(i int, events uint32) bool {
	c := &w.conns[i]
	events |= syscall.EPOLLIN | syscall.EPOLLRDHUP | -syscall.EPOLLET
	if c.events&events == events {
		return true
	}
	op := syscall.EPOLL_CTL_ADD
	if c.events != 0 {
		op = syscall.EPOLL_CTL_MOD
	}
	ev := syscall.EpollEvent{Events: events, Fd: int32(i)}
	if err := syscall.EpollCtl(w.ep, op, c.fd, &ev); err != nil {
		w.fail(i)
		return false
	}
	c.events = events
	return true
}

// event handles what epoll reported for connection i.
func (w *worker) event(i int, ev uint32) {
	c := &w.conns[i]
	switch c.state {
	case stWriting:
		if ev&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			w.send(i)
		}
	case stHead, stBody, stDone, stEOF:
		if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			w.recv(i, ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP) != 0)
		}
	}
}

// send writes the rest of the request; the response is then awaited.
func (w *worker) send(i int) {
	c := &w.conns[i]
	for c.wpos < len(w.cfg.req) {
		n, err := syscall.Write(c.fd, w.cfg.req[c.wpos:])
		if err == syscall.EAGAIN {
			// Rare (connect still in progress): only then is the
			// connection watched for output.
			w.watch(i, syscall.EPOLLOUT)
			return
		}
		if err != nil {
			w.fail(i)
			return
		}
		c.wpos += n
	}
	if w.watch(i, 0) {
		c.state = stHead
	}
}

// recv reads what has arrived on connection i, as far as the end of the
// response (and, without keep-alive, the server's close). hup reports that
// the server's close has been seen: every byte it sent is in the socket.
func (w *worker) recv(i int, hup bool) {
	c := &w.conns[i]
	for c.state == stHead || c.state == stBody {
		var err error
		if c.state == stHead {
			err = w.readHead(c)
		} else {
			err = w.readBody(c, &hup)
		}
		if err == syscall.EAGAIN {
			return
		}
		if err != nil {
			w.fail(i)
			return
		}
	}
	if c.state == stDone {
		w.done(c)
		if !c.closing {
			w.begin(i)
			return
		}
		c.state = stEOF
		if !hup {
			return // the close has its own event: no read to see EAGAIN
		}
	}
	if !hup {
		n, err := syscall.Read(c.fd, w.buf[:1])
		if err == syscall.EAGAIN {
			return
		}
		if err == nil && n > 0 {
			w.fail(i)
			return
		}
	}
	w.closeConn(c)
	w.begin(i)
}

// readHead reads into the head buffer and, once the head is whole, sets up
// the body from it.
func (w *worker) readHead(c *conn) error {
	if c.hlen == len(c.head) {
		return errHeadSize
	}
	n, err := syscall.Read(c.fd, c.head[c.hlen:])
	if err != nil {
		return err
	}
	if n == 0 {
		return errEOF
	}
	c.hlen += n
	w.bytes += int64(n)
	var h httpprobe.Head
	if _, err := httpprobe.ParseHead(c.head[:c.hlen], &h); err != nil {
		if err == httpprobe.ErrIncomplete {
			return nil
		}
		return err
	}
	c.status = h.Status
	c.kind = h.Body(false)
	c.closing = !w.cfg.keep || !h.KeepsConn()
	c.state = stBody
	switch c.kind {
	case httpprobe.BodyNone:
		c.state = stDone
	case httpprobe.BodyLength:
		c.left = h.ContentLength
	case httpprobe.BodyClose:
		c.closing = true
	}
	return w.consume(c, c.head[h.Len:c.hlen])
}

// readBody reads body bytes into the thread's buffer and counts them; a
// body delimited by the close ends there (and sets *hup).
func (w *worker) readBody(c *conn, hup *bool) error {
	n, err := syscall.Read(c.fd, w.buf)
	if err != nil {
		return err
	}
	if n == 0 {
		if c.kind == httpprobe.BodyClose {
			c.state, *hup = stDone, true
			return nil
		}
		return errEOF
	}
	w.bytes += int64(n)
	return w.consume(c, w.buf[:n])
}

// consume accounts body bytes p; the state becomes stDone at the body's end.
func (w *worker) consume(c *conn, p []byte) error {
	switch c.kind {
	case httpprobe.BodyLength:
		c.left -= int64(len(p))
		if c.left < 0 {
			return errTrailing
		}
		if c.left == 0 {
			c.state = stDone
		}
	case httpprobe.BodyChunked:
		for len(p) > 0 && !c.chunked.Done() {
			n, _, err := c.chunked.Step(p)
			if err != nil {
				return err
			}
			p = p[n:]
		}
		if c.chunked.Done() {
			if len(p) > 0 {
				return errTrailing
			}
			c.state = stDone
		}
	case httpprobe.BodyNone:
		if len(p) > 0 {
			return errTrailing
		}
	}
	return nil
}

// done counts a whole response and records its latency.
func (w *worker) done(c *conn) {
	w.ok++
	if c.status < 200 || c.status > 299 {
		w.non2xx++
	}
	if w.hist != nil {
		us := (load.Now() - c.start) / 1000
		w.hist[min(us, histBuckets-1)]++
	}
}

// retryDelay is how long a failed connection waits before it reconnects,
// so that a refused port is not hammered.
const retryDelay = int64(10 * time.Millisecond)

// fail counts a failed request and restarts its connection retryDelay
// later.
func (w *worker) fail(i int) {
	c := &w.conns[i]
	w.failed++
	w.closeConn(c)
	c.state, c.start = stRestart, load.Now()+retryDelay
	w.restarts++
}

// restart begins a request on every failed connection whose delay is over.
func (w *worker) restart() {
	now := load.Now()
	for i := range w.conns {
		if c := &w.conns[i]; c.state == stRestart && c.start <= now {
			w.restarts--
			w.begin(i)
		}
	}
}

func (w *worker) closeConn(c *conn) {
	if c.fd >= 0 {
		syscall.Close(c.fd) // also leaves the epoll set
		c.fd, c.events = -1, 0
	}
}
