package execute

import (
	"runtime"

	"github.com/backbench/backbench/sockets"
)

// ReservedFiles is how many file descriptors a run keeps for itself beside
// its workers' connections and its rings: the standard streams, the
// runtime's network poller, the output files (-g, -e, --raw, --out, a
// profile), the backend's sampling (/proc files, the FPM status page) and
// the dials a probe makes before a sweep, with room to spare.
const ReservedFiles = 64

// FilesNeeded is how many file descriptors a run of concurrency workers
// may hold at once: one per worker's connection (a worker closes its
// connection before it dials the next one, on either engine), one ring per
// thread (the io_uring engine), and ReservedFiles.
func FilesNeeded(concurrency int) uint64 {
	return uint64(max(concurrency, 0)) + uint64(runtime.GOMAXPROCS(0)) + ReservedFiles
}

// FileLimit raises the soft RLIMIT_NOFILE as Prepare does for a run of
// concurrency workers and returns what such a run needs (FilesNeeded), the
// limit in force, and whether it is enough. When the limit cannot be read
// or set, it says nothing against the run (ok), which then meets the
// limit, if ever, as failed dials.
func FileLimit(concurrency int) (need, limit uint64, ok bool) {
	need = FilesNeeded(concurrency)
	limit, err := sockets.RaiseNoFileLimit(fileWant(concurrency))
	if err != nil {
		return need, limit, true
	}
	return need, limit, limit >= need
}

// MaxConcurrency is the highest concurrency whose run the file limit,
// raised to its hard limit, can hold (see FileLimit), at least 1.
func MaxConcurrency() int {
	_, limit, _ := FileLimit(1 << 20)
	if n := limit - FilesNeeded(0); limit > FilesNeeded(0) && n < 1<<31 {
		return max(int(n), 1)
	}
	return 1
}

// fileWant is the soft file limit Prepare asks for: twice the workers'
// connections and ReservedFiles, more than FilesNeeded so that a run near
// its need keeps headroom where the hard limit allows it.
func fileWant(concurrency int) uint64 {
	return uint64(max(concurrency, 0))*2 + ReservedFiles
}
