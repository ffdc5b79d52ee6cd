package backend

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procInfo is what /proc/PID/stat says of one process.
type procInfo struct {
	pid, ppid, pgid int
	state           byte   // R, S, D, Z, X ...
	start           uint64 // starttime, clock ticks after boot: with pid, who it is
}

// alive reports whether the process still runs: a zombie has exited.
func (p procInfo) alive() bool { return p.state != 'Z' && p.state != 'X' }

// readStat reads /proc/PID/stat.
func readStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	return parseStat(pid, string(b))
}

// parseStat parses a /proc/PID/stat line. The command name, in
// parentheses, may hold spaces and parentheses: the fields are read after
// the last ')'.
func parseStat(pid int, s string) (procInfo, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, errors.New("backend: bad /proc stat line")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 || len(f[0]) == 0 {
		return procInfo{}, errors.New("backend: short /proc stat line")
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procInfo{}, errors.New("backend: bad /proc stat line: " + err.Error())
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0], start: start}, nil
}

// readAll reads the stat of every process of the machine (of this PID
// namespace); processes that exit meanwhile are left out.
func readAll() (map[int]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	all := make(map[int]procInfo, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if pi, err := readStat(pid); err == nil {
			all[pid] = pi
		}
	}
	return all, nil
}

// socketInodes returns the inodes of the sockets process pid holds open
// (the links "socket:[INODE]" under /proc/PID/fd), added to into.
func socketInodes(pid int, into map[uint64]bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		l, err := os.Readlink(dir + "/" + n)
		if err != nil || !strings.HasPrefix(l, "socket:[") || !strings.HasSuffix(l, "]") {
			continue
		}
		if ino, err := strconv.ParseUint(l[len("socket:["):len(l)-1], 10, 64); err == nil {
			into[ino] = true
		}
	}
}

// holders returns the PIDs of the processes of the machine that hold a
// socket of one of the inodes, for a message; at most a few.
func holders(inodes []uint64) []int {
	want := make(map[uint64]bool, len(inodes))
	for _, ino := range inodes {
		want[ino] = true
	}
	all, err := readAll()
	if err != nil {
		return nil
	}
	var out []int
	for pid := range all {
		have := map[uint64]bool{}
		socketInodes(pid, have)
		for ino := range have {
			if want[ino] {
				out = append(out, pid)
				break
			}
		}
		if len(out) >= 3 {
			break
		}
	}
	return out
}

// comm returns the command name of pid ("" if gone).
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// signalNames are the names of the usual signals, for messages.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// signalName returns "SIGTERM" for SIGTERM, "signal 40" for one without a name here.
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
