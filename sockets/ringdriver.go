package sockets

import (
	"iter"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RingDriver runs tasks as coroutines over one Ring, on the goroutine that
// calls Run: a task whose connection (a Conn bound to its slot with
// UseRing) needs the kernel queues the operation in the ring and yields;
// the driver submits what its tasks queued and waits for completions in
// one system call, then resumes each task whose operation completed, with
// its result. The tasks' code is the ordinary blocking code of a worker.
//
// The wait is bounded (at most MaxRingWait, or the nearest deadline of a
// task's connection, which is then cancelled), and the driver lets the
// runtime run other goroutines (timers, the garbage collector's
// stop-the-world) after an interrupted wait, a wait that timed out, and at
// least every MaxRingWait.
type RingDriver struct {
	ring  *Ring
	slots []*RingSlot
	ready []*RingSlot
	nap   time.Time // the last runtime.Gosched
}

// MaxRingWait bounds one wait of a RingDriver in the kernel: 1 ms.
const MaxRingWait = time.Millisecond

// user data of operations whose completion nobody waits for.
const ignored = ^uint64(0)

// RingSlot is one task's place in a RingDriver: its coroutine, its
// operation in flight and the deadline of its connection.
type RingSlot struct {
	d        *RingDriver
	id       uint64
	task     func()
	yield    func(struct{}) bool
	next     func() (struct{}, bool)
	stop     func()
	waiting  bool         // an operation is in flight
	canceled bool         // its cancellation was queued
	res      int32        // the result of the last operation
	deadline atomic.Int64 // Unix ns of the connection's deadline; 0: none
	buf      []byte       // the buffer of the operation in flight
	sa       [unix.SizeofSockaddrAny]byte
	conn     ringConn
}

// NewRingDriver returns a driver for up to tasks tasks, with a ring of its
// own.
func NewRingDriver(tasks int) (*RingDriver, error) {
	n := uint32(8)
	for n < uint32(4*tasks) {
		n *= 2
	}
	r, err := NewRing(n)
	if err != nil {
		return nil, err
	}
	return &RingDriver{ring: r}, nil
}

// Slot returns a new slot of d for a task that Go will run.
func (d *RingDriver) Slot() *RingSlot {
	s := &RingSlot{d: d, id: uint64(len(d.slots))}
	s.conn.s = s
	d.slots = append(d.slots, s)
	return s
}

// Go sets the task of slot s; Run runs it.
func (s *RingSlot) Go(task func()) { s.task = task }

// Run runs the tasks of every slot until all have returned, then closes the
// ring. A task's panic is raised again here.
func (d *RingDriver) Run() {
	defer d.ring.Close()
	live := 0
	for _, s := range d.slots {
		if s.task == nil {
			continue
		}
		s.next, s.stop = iter.Pull(func(yield func(struct{}) bool) {
			s.yield = yield
			s.task()
		})
		d.ready = append(d.ready, s)
		live++
	}
	defer func() {
		for _, s := range d.slots {
			if s.stop != nil {
				s.stop()
			}
		}
	}()
	d.nap = time.Now()
	for {
		for _, s := range d.ready {
			if _, ok := s.next(); !ok {
				live--
			}
		}
		d.ready = d.ready[:0]
		if live == 0 {
			break
		}
		now := time.Now()
		wait := MaxRingWait
		for _, s := range d.slots {
			if !s.waiting {
				continue
			}
			dl := s.deadline.Load()
			if dl == 0 {
				continue
			}
			left := time.Duration(dl - now.UnixNano())
			if left <= 0 {
				if !s.canceled {
					s.canceled = true
					e := d.ring.get()
					e.opcode, e.fd, e.addr, e.userData = opAsyncCancel, -1, s.id, ignored
				}
				continue
			}
			wait = min(wait, left)
		}
		errno := d.ring.Enter(true, wait)
		d.ring.Reap(d.complete)
		if errno != 0 || now.Sub(d.nap) >= MaxRingWait {
			// Interrupted (a preemption request), timed out, or busy
			// for a while: let the runtime run the rest.
			runtime.Gosched()
			d.nap = time.Now()
		}
	}
	// Submit the closes queued last; the kernel runs them at once.
	d.ring.Enter(false, 0)
}

func (d *RingDriver) complete(ud uint64, res int32) {
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
