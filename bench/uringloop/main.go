// Command uringloop is a prototype HTTP/1.1 load loop on io_uring, written to
// measure what an io_uring engine would save in client CPU per request
// before one is built into backbench. It uses the raw
// system calls (io_uring_setup, io_uring_enter, the mmapped SQ and CQ rings)
// with no library.
//
// Each of -t OS threads (locked, GOMAXPROCS by default) owns one ring and
// C/threads connections. Without -k every request uses a new connection: a
// socket (IORING_OP_SOCKET, or socket(2) with -socketop=false), then
// CONNECT linked to SEND (backbench's own request, Connection: close) linked
// to RECV; the response is parsed as it arrives (status line and headers,
// then Content-Length, chunked or to-close body, counted, not copied), read
// to EOF so that TIME_WAIT stays on the server, and the socket is closed by
// IORING_OP_CLOSE while the next connection starts. With -k each request is
// SEND linked to RECV on a kept connection. Completions are reaped in
// batches: one io_uring_enter submits every queued SQE and waits for at
// least one completion. With -measure (the default) a monotonic clock is
// read at the start and end of every request into a preallocated histogram,
// as backbench does; -measure=false runs the pure loop.
//
// Usage: uringloop -c N -d DURATION [-t THREADS] [-k] URL, with URL
// http://HOST:PORT/path or http://unix:/path.sock:/path. It prints
// "requests N", "failed N" and "Requests/sec X", as bench/bareloop does.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/sockets"
)

// config is one run of the loop.
type config struct {
	target    sockets.Target
	conns     int
	threads   int
	dur       time.Duration
	keepAlive bool
	measure   bool
	socketOp  bool // IORING_OP_SOCKET rather than socket(2)
	defer_    bool // IORING_SETUP_DEFER_TASKRUN
	rawEnter  bool // io_uring_enter without telling the runtime
	batch     int  // completions to wait for per io_uring_enter
}

// result sums the threads' counts.
type result struct {
	ok, failed int64
	elapsed    time.Duration
	hist       []uint32 // request durations, 1 µs buckets, the last one open
}

const histBuckets = 1 << 16

func main() {
	conns := flag.Int("c", 10, "connections")
	dur := flag.Duration("d", 5*time.Second, "duration")
	threads := flag.Int("t", runtime.GOMAXPROCS(0), "threads, one ring each")
	keep := flag.Bool("k", false, "keep-alive")
	measure := flag.Bool("measure", true, "read the clock at the start and end of every request")
	socketOp := flag.Bool("socketop", true, "create sockets with IORING_OP_SOCKET rather than socket(2)")
	deferTR := flag.Bool("defer", true, "set up rings with IORING_SETUP_DEFER_TASKRUN")
	rawEnter := flag.Bool("rawenter", false, "call io_uring_enter without telling the Go runtime (no P hand-off while it waits; a GC stop waits for it)")
	batch := flag.Int("batch", 1, "completions to wait for per io_uring_enter (at most the connections per ring)")
	flag.Parse()
	if flag.NArg() != 1 {
		fail("want one URL (http://HOST:PORT/path or http://unix:/path.sock:/path)")
	}
	tg, err := sockets.ParseTarget(flag.Arg(0))
	if err != nil {
		fail(err.Error())
	}
	if tg.Scheme != sockets.SchemeHTTP {
		fail("target " + tg.URL + ": only http is supported")
	}
	if *conns < 1 || *threads < 1 || *dur <= 0 {
		fail("-c and -t must be >= 1, -d > 0")
	}
	res, err := run(config{target: tg, conns: *conns, threads: *threads, dur: *dur,
		keepAlive: *keep, measure: *measure, socketOp: *socketOp, defer_: *deferTR, rawEnter: *rawEnter, batch: *batch})
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("requests %d\nfailed %d\nRequests/sec %.2f\n", res.ok, res.failed, float64(res.ok)/res.elapsed.Seconds())
	if *measure && res.ok > 0 {
		fmt.Printf("Latency p50 %s p99 %s\n", res.quantile(0.5), res.quantile(0.99))
	}
	if res.ok == 0 {
		os.Exit(1)
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "uringloop:", msg)
	os.Exit(2)
}

// quantile returns the q-quantile of the recorded durations (1 µs
// resolution).
func (r *result) quantile(q float64) time.Duration {
	var n uint64
	for _, c := range r.hist {
		n += uint64(c)
	}
	want := uint64(q * float64(n))
	var seen uint64
	for i, c := range r.hist {
		seen += uint64(c)
		if seen > want {
			return time.Duration(i) * time.Microsecond
		}
	}
	return time.Duration(len(r.hist)) * time.Microsecond
}

// run runs the loop for cfg.dur on cfg.threads locked threads.
func run(cfg config) (result, error) {
	req, err := httpprobe.BuildRequest(httpprobe.Config{Target: cfg.target, KeepAlive: cfg.keepAlive})
	if err != nil {
		return result{}, err
	}
	sa, err := sockaddr(cfg.target)
	if err != nil {
		return result{}, err
	}
	threads := min(cfg.threads, cfg.conns)
	workers := make([]*worker, threads)
	for i := range workers {
		n := cfg.conns / threads
		if i < cfg.conns%threads {
			n++
		}
		workers[i] = newWorker(cfg, req, sa, n)
	}
	errs := make([]error, threads)
	var wg sync.WaitGroup
	start := time.Now()
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			errs[i] = w.run()
		}()
	}
	wg.Wait()
	res := result{elapsed: time.Since(start), hist: make([]uint32, histBuckets)}
	for _, w := range workers {
		res.ok += w.ok
		res.failed += w.failed
		for i, c := range w.hist {
			res.hist[i] += c
		}
	}
	return res, errors.Join(errs...)
}

// addr is a socket address in the kernel's layout, for IORING_OP_CONNECT.
type addr struct {
	family int
	raw    []byte
}

func sockaddr(tg sockets.Target) (addr, error) {
	if tg.Network == "unix" {
		var sa syscall.RawSockaddrUnix
		if len(tg.Address) >= len(sa.Path) {
			return addr{}, fmt.Errorf("socket path %q too long", tg.Address)
		}
		sa.Family = syscall.AF_UNIX
		for i := range len(tg.Address) {
			sa.Path[i] = int8(tg.Address[i])
		}
		n := int(unsafe.Offsetof(sa.Path)) + len(tg.Address) + 1
		return addr{syscall.AF_UNIX, unsafe.Slice((*byte)(unsafe.Pointer(&sa)), n)}, nil
	}
	ta, err := net.ResolveTCPAddr("tcp", tg.Address)
	if err != nil {
		return addr{}, err
	}
	port := [2]byte{byte(ta.Port >> 8), byte(ta.Port)}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := syscall.RawSockaddrInet4{Family: syscall.AF_INET, Port: *(*uint16)(unsafe.Pointer(&port))}
		copy(sa.Addr[:], ip4)
		return addr{syscall.AF_INET, unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))}, nil
	}
	sa := syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Port: *(*uint16)(unsafe.Pointer(&port))}
	copy(sa.Addr[:], ta.IP.To16())
	if ta.Zone != "" {
		if ifi, err := net.InterfaceByName(ta.Zone); err == nil {
			sa.Scope_id = uint32(ifi.Index)
		} else if id, err := strconv.Atoi(ta.Zone); err == nil {
			sa.Scope_id = uint32(id)
		}
	}
	return addr{syscall.AF_INET6, unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))}, nil
}
