package procstat

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// Proc is what /proc/PID/stat says of one process.
type Proc struct {
	// PID is the process; PPID its parent, PGID its process group.
	PID, PPID, PGID int
	// State is field 3: R, S, D, Z (a zombie: exited, not yet reaped),
	// X (dead) ...
	State byte
	// Start is starttime (field 22), in clock ticks after boot: with the
	// PID, who the process is (a PID may be reused, not with the same
	// start time).
	Start uint64
	// UTime and STime are the CPU time the process used in user and
	// system mode, CUTime and CSTime the time its waited-for children
	// used (fields 14 to 17), in clock ticks (USER_HZ, 100 a second).
	UTime, STime, CUTime, CSTime int64
}

// Alive reports whether the process still runs: a zombie (Z) or a dead
// one (X) has exited.
func (p Proc) Alive() bool { return p.State != 'Z' && p.State != 'X' }

// ReadStat reads /proc/PID/stat (an error if the process is gone or the
// line cannot be read).
func ReadStat(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	return parseStat(pid, string(b))
}

// parseStat parses a /proc/PID/stat line of process pid. The command
// name, in parentheses, may hold spaces and parentheses: the fields are
// counted from the last ')'.
func parseStat(pid int, s string) (Proc, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Proc{}, errors.New("procstat: bad stat line")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field k is f[k-3]; starttime is field 22.
	if len(f) < 20 || len(f[0]) == 0 {
		return Proc{}, errors.New("procstat: short stat line")
	}
	var errs []error
	num := func(k int) int64 {
		v, err := strconv.ParseInt(f[k-3], 10, 64)
		errs = append(errs, err)
		return v
	}
	p := Proc{PID: pid, State: f[0][0]}
	p.PPID, p.PGID = int(num(4)), int(num(5))
	p.UTime, p.STime, p.CUTime, p.CSTime = num(14), num(15), num(16), num(17)
	start, err := strconv.ParseUint(f[22-3], 10, 64)
	p.Start = start
	if err := errors.Join(append(errs, err)...); err != nil {
		return Proc{}, errors.New("procstat: bad stat line: " + err.Error())
	}
	return p, nil
}

// Table reads the stat of every process of the machine (of this PID
// namespace's /proc), by PID; the processes that exit meanwhile, or whose
// stat cannot be read, are left out. Zombies are in it (Alive says false).
func Table() (map[int]Proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	all := make(map[int]Proc, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, err := ReadStat(pid); err == nil {
			all[pid] = p
		}
	}
	return all, nil
}

// Comm returns the command name of process pid, from /proc/PID/comm
// ("" if it is gone).
func Comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// SocketInodes adds to into the inodes of the sockets process pid holds
// open (the links "socket:[INODE]" under /proc/PID/fd). A process that is
// gone, or whose descriptors cannot be read (another user's), adds none.
func SocketInodes(pid int, into map[uint64]bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		l, err := os.Readlink(dir + "/" + n)
		if err != nil {
			continue
		}
		if ino, ok := socketInode(l); ok {
			into[ino] = true
		}
	}
}

// socketInode returns the inode of a /proc/PID/fd link "socket:[INODE]",
// and whether the link is one.
func socketInode(link string) (uint64, bool) {
	if !strings.HasPrefix(link, "socket:[") || !strings.HasSuffix(link, "]") {
		return 0, false
	}
	ino, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 64)
	return ino, err == nil
}

// SocketHolders returns the PIDs of up to limit processes of the machine
// that hold a socket of one of inodes open, in no order (nil if /proc
// cannot be read).
func SocketHolders(inodes []uint64, limit int) []int {
	want := make(map[uint64]bool, len(inodes))
	for _, ino := range inodes {
		want[ino] = true
	}
	all, err := Table()
	if err != nil {
		return nil
	}
	var out []int
	for pid := range all {
		if len(out) >= limit {
			break
		}
		have := map[uint64]bool{}
		SocketInodes(pid, have)
		for ino := range have {
			if want[ino] {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// Environ returns the environment process pid was started with, from
// /proc/PID/environ: NUL-separated KEY=VALUE entries (nil if it cannot be
// read: the process is gone, or another user's).
func Environ(pid int) []byte {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return b
}

// EnvValue returns the value of key in an environment block as Environ
// returns it, and whether key is there.
func EnvValue(env []byte, key string) (string, bool) {
	prefix := []byte(key + "=")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// PIDNamespace returns the PID namespace of process pid, the target of
// /proc/PID/ns/pid ("pid:[INODE]"); pid 0 is this process (/proc/self).
// It returns "" when the link cannot be read.
func PIDNamespace(pid int) string {
	p := "self"
	if pid != 0 {
		p = strconv.Itoa(pid)
	}
	l, _ := os.Readlink("/proc/" + p + "/ns/pid")
	return l
}
