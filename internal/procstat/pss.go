package procstat

// PSS returns the proportional set size of the process pid now, in bytes,
// from /proc/PID/smaps_rollup (an error where it cannot be read: the
// process is gone, or belongs to another user).
func PSS(pid int) (int64, error) {
	r, err := readRollup(pid)
	return r.pss, err
}
