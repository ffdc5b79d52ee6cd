package sockets

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI (include/uapi/linux/io_uring.h), the parts the ring
// engine uses.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	setupCQSize      = 1 << 3
	setupCoopTaskrun = 1 << 8
	setupTaskrunFlag = 1 << 9

	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3

	featExtArg = 1 << 8

	opAsyncCancel = 14
	opConnect     = 16
	opClose       = 19
	opSend        = 26
	opRecv        = 27
)

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

// sqe is a submission queue entry (64 bytes).
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	fileIndex   int32
	addr3       uint64
	pad         uint64
}

// cqe is a completion queue entry (16 bytes).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// geteventsArg is io_uring_getevents_arg: the timeout of a wait.
type geteventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// Ring is one io_uring instance: a submission and a completion queue shared
// with the kernel. It is used by one goroutine at a time. Filled entries
// are handed to the kernel by Enter, which also waits for completions.
type Ring struct {
	fd                  int
	sqMem, cqMem, sqMap []byte
	sqHead, sqTail      *uint32
	sqMask              uint32
	sqes                []sqe
	cqHead, cqTail      *uint32
	cqMask              uint32
	cqes                []cqe
	tail                uint32 // our SQ tail, published by Enter

	arg geteventsArg  // Enter's wait bound, where the kernel reads it
	ts  unix.Timespec // pointed to by arg
}

// ErrNoRing is returned when the kernel refuses io_uring: too old, disabled
// (kernel.io_uring_disabled), or filtered out (seccomp in containers).
var ErrNoRing = errors.New("io_uring is not available")

// NewRing sets up a ring of at least entries submission entries and, when
// cqEntries is larger than twice that, of cqEntries completion entries (a
// completion that finds the completion queue full is kept by the kernel
// until there is room, but costs more).
func NewRing(entries, cqEntries uint32) (*Ring, error) {
	p := ringParams{flags: setupCoopTaskrun | setupTaskrunFlag}
	if cqEntries > 2*entries {
		p.flags |= setupCQSize
		p.cqEntries = cqEntries
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno == unix.EINVAL {
		p = ringParams{}
		fd, _, errno = unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	}
	switch errno {
	case 0:
	case unix.ENOSYS, unix.EPERM, unix.EACCES, unix.EINVAL:
		return nil, fmt.Errorf("%w (io_uring_setup: %v)", ErrNoRing, errno)
	default:
		return nil, fmt.Errorf("io_uring_setup: %v", errno)
	}
	r := &Ring{fd: int(fd)}
	if p.features&featExtArg == 0 {
		r.Close()
		return nil, fmt.Errorf("%w (no IORING_FEAT_EXT_ARG: kernel older than 5.11)", ErrNoRing)
	}
	mm := func(off int64, size uint32) ([]byte, error) {
		return unix.Mmap(r.fd, off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	}
	var err error
	if r.sqMem, err = mm(offSQRing, p.sqOff.array+p.sqEntries*4); err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring: mmap SQ ring: %v", err)
	}
	if r.cqMem, err = mm(offCQRing, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(cqe{}))); err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring: mmap CQ ring: %v", err)
	}
	if r.sqMap, err = mm(offSQEs, p.sqEntries*uint32(unsafe.Sizeof(sqe{}))); err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring: mmap SQEs: %v", err)
	}
	u32 := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	r.sqHead, r.sqTail, r.sqMask = u32(r.sqMem, p.sqOff.head), u32(r.sqMem, p.sqOff.tail), *u32(r.sqMem, p.sqOff.ringMask)
	r.cqHead, r.cqTail, r.cqMask = u32(r.cqMem, p.cqOff.head), u32(r.cqMem, p.cqOff.tail), *u32(r.cqMem, p.cqOff.ringMask)
	// The SQ array maps ring slot i to SQE i, once and for all.
	array := unsafe.Slice(u32(r.sqMem, p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqMap[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	r.arg.ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
	return r, nil
}

// get returns a zeroed SQE to fill; it is submitted by the next Enter. When
// the SQ is full, what is queued is submitted first.
func (r *Ring) get() *sqe {
	for r.tail-atomic.LoadUint32(r.sqHead) >= uint32(len(r.sqes)) {
		r.Enter(false, 0)
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s
}

// Enter submits every queued SQE and, when wait is set, waits until a
// completion is posted or timeout has passed (at least 1 µs): one system
// call, made raw. The runtime is not told that the thread blocks, which
// saves its system call hand-off, but no other goroutine gets the thread's
// P meanwhile, and a stop-the-world waits for the call to return: the
// caller must keep the wait short and let the runtime run (runtime.Gosched)
// after an EINTR, which is how the runtime's preemption signal shows here.
// It returns 0, EINTR, ETIME (the timeout passed) or another errno.
func (r *Ring) Enter(wait bool, timeout time.Duration) syscall.Errno {
	atomic.StoreUint32(r.sqTail, r.tail)
	n := r.tail - atomic.LoadUint32(r.sqHead)
	if !wait {
		if n == 0 {
			return 0
		}
		_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), 0, 0, 0, 0)
		return errno
	}
	r.ts = unix.NsecToTimespec(int64(max(timeout, time.Microsecond)))
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), 1,
		enterGetEvents|enterExtArg, uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg))
	return errno
}

// Flush submits every queued SQE and has the kernel post the completions
// it holds (those it kept while the completion queue was full, and those
// whose work was left for this thread), without waiting: one system call,
// made raw. It returns 0, EINTR or another errno.
func (r *Ring) Flush() syscall.Errno {
	atomic.StoreUint32(r.sqTail, r.tail)
	n := r.tail - atomic.LoadUint32(r.sqHead)
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), 0, enterGetEvents, 0, 0)
	return errno
}

// Reap calls f with the user data and result of every completion posted,
// and frees them.
func (r *Ring) Reap(f func(userData uint64, res int32)) {
	head := *r.cqHead
	for tail := atomic.LoadUint32(r.cqTail); head != tail; head++ {
		c := &r.cqes[head&r.cqMask]
		f(c.userData, c.res)
	}
	atomic.StoreUint32(r.cqHead, head)
}

// Close unmaps the rings and closes the ring's descriptor; the kernel
// cancels whatever is still in flight.
func (r *Ring) Close() {
	for _, m := range [][]byte{r.sqMap, r.cqMem, r.sqMem} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	unix.Close(r.fd)
}

var ringProbe struct {
	once sync.Once
	err  error
}

// RingAvailable returns nil when io_uring can be set up in this process
// (probed once), or why not (wrapping ErrNoRing when the kernel refuses).
func RingAvailable() error {
	ringProbe.once.Do(func() {
		r, err := NewRing(4, 0)
		if err == nil {
			r.Close()
		}
		ringProbe.err = err
	})
	return ringProbe.err
}
