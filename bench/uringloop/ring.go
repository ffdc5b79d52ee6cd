package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The io_uring ABI (include/uapi/linux/io_uring.h), the parts this loop uses.
const (
	sysIOUringSetup = 425
	sysIOUringEnter = 426

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13

	enterGetEvents = 1 << 0

	sqeIOLink = 1 << 2

	opTimeout     = 11
	opAsyncCancel = 14
	opConnect     = 16
	opClose       = 19
	opSend        = 26
	opRecv        = 27
	opSocket      = 45

	cancelAll = 1 << 0
	cancelAny = 1 << 2
)

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
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

// ring is one io_uring instance, used by one OS thread only. Filled SQEs are
// published to the kernel by enter, which also waits for completions.
type ring struct {
	fd                  int
	sqMem, cqMem, sqMap []byte
	sqHead, sqTail      *uint32
	sqMask              uint32
	sqes                []sqe
	cqHead, cqTail      *uint32
	cqMask              uint32
	cqes                []cqe
	tail                uint32 // our SQ tail, published by enter
	raw                 bool   // enter with RawSyscall6 (the runtime is not told)
}

// errNoRing is returned when the kernel refuses io_uring (disabled, or
// filtered by seccomp).
var errNoRing = errors.New("io_uring unavailable")

// newRing sets up a ring of at least entries SQEs. With deferTaskrun the
// kernel runs completion work only when this thread enters the ring (the
// thread must be locked); if the kernel refuses the flags, the ring is set up
// without them.
func newRing(entries uint32, deferTaskrun bool) (*ring, error) {
	var p params
	if deferTaskrun {
		p.flags = setupSingleIssuer | setupDeferTaskrun
	}
	fd, _, errno := syscall.Syscall(sysIOUringSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno == syscall.EINVAL && p.flags != 0 {
		p = params{}
		fd, _, errno = syscall.Syscall(sysIOUringSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	}
	switch errno {
	case 0:
	case syscall.ENOSYS, syscall.EPERM:
		return nil, fmt.Errorf("%w: io_uring_setup: %v", errNoRing, errno)
	default:
		return nil, fmt.Errorf("io_uring_setup: %v", errno)
	}
	r := &ring{fd: int(fd)}
	mm := func(off int64, size uint32) ([]byte, error) {
		return syscall.Mmap(r.fd, off, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	}
	var err error
	if r.sqMem, err = mm(offSQRing, p.sqOff.array+p.sqEntries*4); err != nil {
		r.close()
		return nil, fmt.Errorf("mmap SQ ring: %v", err)
	}
	if r.cqMem, err = mm(offCQRing, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(cqe{}))); err != nil {
		r.close()
		return nil, fmt.Errorf("mmap CQ ring: %v", err)
	}
	if r.sqMap, err = mm(offSQEs, p.sqEntries*uint32(unsafe.Sizeof(sqe{}))); err != nil {
		r.close()
		return nil, fmt.Errorf("mmap SQEs: %v", err)
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
	return r, nil
}

// get returns a zeroed SQE to fill; it is submitted by the next enter. When
// the SQ is full, what is queued is submitted first.
func (r *ring) get() (*sqe, error) {
	for r.tail-atomic.LoadUint32(r.sqHead) >= uint32(len(r.sqes)) {
		if err := r.enter(0); err != nil {
			return nil, err
		}
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s, nil
}

// enter submits every queued SQE and, when wait > 0, waits until at least
// wait completions are posted: one system call.
func (r *ring) enter(wait uint32) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	var flags uintptr
	if wait > 0 {
		flags = enterGetEvents
	}
	for {
		n := r.tail - atomic.LoadUint32(r.sqHead)
		var errno syscall.Errno
		if r.raw {
			_, _, errno = syscall.RawSyscall6(sysIOUringEnter, uintptr(r.fd), uintptr(n), uintptr(wait), flags, 0, 0)
		} else {
			_, _, errno = syscall.Syscall6(sysIOUringEnter, uintptr(r.fd), uintptr(n), uintptr(wait), flags, 0, 0)
		}
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			if wait == 0 && r.tail == atomic.LoadUint32(r.sqHead) {
				return nil
			}
			continue
		}
		return fmt.Errorf("io_uring_enter: %v", errno)
	}
}

// close unmaps the rings and closes the ring's descriptor; the kernel
// cancels whatever is still in flight.
func (r *ring) close() {
	for _, m := range [][]byte{r.sqMap, r.cqMem, r.sqMem} {
		if m != nil {
			syscall.Munmap(m)
		}
	}
	syscall.Close(r.fd)
}

func loadAcquire(p *uint32) uint32     { return atomic.LoadUint32(p) }
func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
