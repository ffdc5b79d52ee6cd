package sockets

import (
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A ring driver runs tasks as coroutines over one Ring, on a goroutine of
// its own: a task whose connection (a Conn bound to its slot with UseRing)
// needs the kernel queues the operation in the ring and yields; the driver
// submits what its tasks queued and waits for completions in one system
// call, then resumes each task whose operation completed, with its result.
// The tasks' code is the ordinary blocking code of a worker.
//
// The wait is made raw (see Ring.Enter) and bounded: at most MaxRingWait,
// or until the nearest deadline of a task's connection, whose operation is
// then cancelled. The driver lets the runtime run other goroutines (timers,
// the garbage collector's stop-the-world) after an interrupted wait, a wait
// that timed out, and at least every MaxRingWait.
//
// Every round of the driver is bounded, whatever the number of tasks, so
// that deadlines hold at any concurrency: it resumes ready tasks for at
// most MaxRingWait and until they have queued maxRoundConnects TCP
// connects (those left wait for the next round, in order), then submits,
// reaps and, at least every MaxRingWait, looks for operations past their
// deadline. A round that resumed every ready task once queued thousands of
// connects at high concurrency, which the kernel makes in the submission
// and its search for a free local port can stretch to seconds (about 1 ms
// a connect past half the port range): no deadline was looked at
// meanwhile and no completion reaped, and requests failed with "write:
// timeout" on connections that had come up long before.
//
// The drivers are shared by the whole process (RunOnRings), so that runs
// that overlap in one process never hold more threads than the first
// asked for.
type ringDriver struct {
	ring      *Ring
	slots     []*RingSlot
	free      []*RingSlot
	ready     []*RingSlot // tasks to resume, from ready[head] on, in order
	head      int
	fresh     []ringTask // tasks to start, from fresh[freshHead] on, in order
	freshHead int
	connects  int       // TCP connects queued in this round
	nap       time.Time // the last runtime.Gosched

	mu      sync.Mutex
	inbox   []ringTask
	pending atomic.Bool
	wake    chan struct{}
}

// ringTask is a task handed to a driver: bind runs on the driver's
// goroutine with the task's slot, before run.
type ringTask struct {
	bind func(*RingSlot)
	run  func()
}

// maxRoundConnects bounds the TCP connects a round queues: the kernel makes
// them in the submission that ends the round, at up to 1 ms each.
const maxRoundConnects = 64

// MaxRingWait bounds one wait of a ring driver in the kernel: 1 ms.
const MaxRingWait = time.Millisecond

// ringEntries and ringCQEntries size each driver's queues: every worker
// of a driver has at most one operation in flight (and a close and a
// cancellation without waiting), and a worker's completion that finds the
// queue full is kept by the kernel until there is room.
const (
	ringEntries   = 1024
	ringCQEntries = 16384
)

// user data of operations whose completion nobody waits for.
const ignored = ^uint64(0)

// RingSlot is one task's place in a ring driver: its coroutine, its
// operation in flight and the deadline of its connection.
type RingSlot struct {
	d        *ringDriver
	id       uint64
	yield    func(struct{}) bool
	next     func() (struct{}, bool)
	waiting  bool                         // an operation is in flight
	canceled bool                         // its cancellation was queued
	res      int32                        // the result of the last operation
	deadline atomic.Int64                 // Unix ns of the connection's deadline; 0: none
	buf      []byte                       // the buffer of the operation in flight
	sa       [unix.SizeofSockaddrAny]byte // the address of a connect in flight
	conn     ringConn
}

var ringPool struct {
	sync.Mutex
	drivers []*ringDriver
}

// RunOnRings runs n tasks on the process's ring drivers, spread over at
// most threads of them (at least one), started as needed: for each task i,
// bind(i, s) with the task's slot s (to bind its connection: Conn.UseRing),
// then task(i). It returns when every task has returned, or at once with an
// error when no ring can be set up (see RingAvailable); then no task ran.
func RunOnRings(threads, n int, bind func(i int, s *RingSlot), task func(i int)) error {
	threads = max(1, threads)
	ringPool.Lock()
	var err error
	for len(ringPool.drivers) < threads {
		var d *ringDriver
		if d, err = newRingDriver(); err != nil {
			break
		}
		ringPool.drivers = append(ringPool.drivers, d)
		go d.loop()
	}
	drivers := ringPool.drivers[:min(threads, len(ringPool.drivers))]
	ringPool.Unlock()
	if len(drivers) == 0 {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		drivers[i%len(drivers)].add(ringTask{
			bind: func(s *RingSlot) { bind(i, s) },
			run: func() {
				defer wg.Done()
				task(i)
			},
		})
	}
	wg.Wait()
	return nil
}

func newRingDriver() (*ringDriver, error) {
	r, err := NewRing(ringEntries, ringCQEntries)
	if err != nil {
		return nil, err
	}
	return &ringDriver{ring: r, wake: make(chan struct{}, 1)}, nil
}

// add hands t to the driver.
func (d *ringDriver) add(t ringTask) {
	d.mu.Lock()
	d.inbox = append(d.inbox, t)
	d.pending.Store(true)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// start queues the tasks of the inbox to be started, and returns how
// many there were.
func (d *ringDriver) start() int {
	d.mu.Lock()
	tasks := d.inbox
	d.inbox = nil
	d.pending.Store(false)
	d.mu.Unlock()
	d.fresh = append(d.fresh, tasks...)
	return len(tasks)
}

// launch gives t a free slot and its coroutine, when its turn to start has
// come (so that a task waiting for its turn holds no stack yet).
func (d *ringDriver) launch(t ringTask) *RingSlot {
	var s *RingSlot
	if k := len(d.free); k > 0 {
		s, d.free = d.free[k-1], d.free[:k-1]
	} else {
		s = &RingSlot{d: d, id: uint64(len(d.slots))}
		s.conn.s, s.conn.fd = s, -1
		d.slots = append(d.slots, s)
	}
	s.deadline.Store(0)
	t.bind(s)
	run := t.run
	s.next, _ = iter.Pull(func(yield func(struct{}) bool) {
		s.yield = yield
		run()
	})
	return s
}

// loop runs the driver's tasks for ever, parked while it has none.
func (d *ringDriver) loop() {
	live := 0
	d.nap = time.Now()
	var scanned time.Time // the last look for deadlines passed
	var nearest int64     // the nearest deadline it found, Unix ns; 0: none
	for {
		if live == 0 && !d.pending.Load() {
			d.ring.Enter(false, 0) // the closes queued last
			<-d.wake
			d.nap = time.Now()
		}
		if d.pending.Load() {
			live += d.start()
		}
		live -= d.resume()
		if live == 0 {
			continue
		}
		now := time.Now()
		if now.Sub(scanned) >= MaxRingWait || (nearest != 0 && nearest <= now.UnixNano()) {
			nearest = d.expire(now.UnixNano())
			scanned = now
		}
		var errno syscall.Errno
		if d.waiting() {
			// Tasks are still waiting for their turn: no wait.
			errno = d.ring.Flush()
		} else {
			wait := MaxRingWait - now.Sub(scanned)
			if nearest != 0 {
				wait = min(wait, time.Duration(nearest-now.UnixNano()))
			}
			errno = d.ring.Enter(true, wait)
		}
		d.ring.Reap(d.complete)
		if errno != 0 || now.Sub(d.nap) >= MaxRingWait {
			// Interrupted (a preemption request), timed out, or busy
			// for a while: let the runtime run the rest.
			runtime.Gosched()
			d.nap = time.Now()
		}
	}
}

// resume gives tasks their turn for at most MaxRingWait and until they
// have queued maxRoundConnects connects, and returns how many of them
// ended: first those whose operation completed, in order,
// then, with the time left (one at least), tasks not started yet. Started
// tasks go first because their requests' time is running: behind thousands
// of tasks making their first connect, a connection that is ready would
// wait past its deadline.
func (d *ringDriver) resume() (ended int) {
	start := time.Now()
	d.connects = 0
	step := func(s *RingSlot) {
		if _, ok := s.next(); !ok {
			ended++
			s.next, s.yield = nil, nil
			d.free = append(d.free, s)
		}
	}
	for d.head < len(d.ready) && time.Since(start) < MaxRingWait && d.connects < maxRoundConnects {
		s := d.ready[d.head]
		d.ready[d.head] = nil
		d.head++
		step(s)
	}
	for first := true; d.freshHead < len(d.fresh) && (first || time.Since(start) < MaxRingWait && d.connects < maxRoundConnects); first = false {
		t := d.fresh[d.freshHead]
		d.fresh[d.freshHead] = ringTask{}
		d.freshHead++
		step(d.launch(t))
	}
	d.ready, d.head = compact(d.ready, d.head)
	d.fresh, d.freshHead = compact(d.fresh, d.freshHead)
	return ended
}

// waiting reports whether tasks wait for their turn.
func (d *ringDriver) waiting() bool {
	return d.head < len(d.ready) || d.freshHead < len(d.fresh)
}

// compact drops the first head elements of the queue q once they are half
// of it, and returns the queue and its new head.
func compact[T any](q []T, head int) ([]T, int) {
	switch {
	case head == len(q):
		return q[:0], 0
	case head > len(q)/2:
		n := copy(q, q[head:])
		clear(q[n:])
		return q[:n], 0
	}
	return q, head
}

// expire queues the cancellation of every operation in flight past its
// deadline (now, Unix ns) and returns the nearest deadline of the others
// (0: none).
func (d *ringDriver) expire(now int64) (nearest int64) {
	for _, s := range d.slots {
		if !s.waiting {
			continue
		}
		dl := s.deadline.Load()
		if dl == 0 {
			continue
		}
		if dl <= now {
			if !s.canceled {
				s.canceled = true
				e := d.ring.get()
				e.opcode, e.fd, e.addr, e.userData = opAsyncCancel, -1, s.id, ignored
			}
			continue
		}
		if nearest == 0 || dl < nearest {
			nearest = dl
		}
	}
	return nearest
}

func (d *ringDriver) complete(ud uint64, res int32) {
	if ud >= uint64(len(d.slots)) {
		return
	}
	s := d.slots[ud]
	s.res, s.waiting, s.buf = res, false, nil
	d.ready = append(d.ready, s)
}

// do queues an operation for the slot's task and yields until it completes;
// it returns the result (a negative errno on failure).
func (s *RingSlot) do(op uint8, fd int, addr unsafe.Pointer, n int, off uint64, flags uint32) int32 {
	e := s.d.ring.get()
	e.opcode, e.fd, e.addr, e.len, e.off, e.opFlags, e.userData = op, int32(fd), uint64(uintptr(addr)), uint32(n), off, flags, s.id
	s.waiting, s.canceled = true, false
	s.yield(struct{}{})
	return s.res
}

// closeFD queues the close of fd without waiting for it: the descriptor
// stays open until the driver's next submission, so no socket made before
// then reuses its number.
func (s *RingSlot) closeFD(fd int) {
	e := s.d.ring.get()
	e.opcode, e.fd, e.userData = opClose, int32(fd), ignored
}

// expired reports whether the deadline has passed.
func (s *RingSlot) expired() bool {
	dl := s.deadline.Load()
	return dl != 0 && dl <= time.Now().UnixNano()
}

// errnoOf returns the errno of a negative result.
func errnoOf(res int32) syscall.Errno { return syscall.Errno(-res) }
