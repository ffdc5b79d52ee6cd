package load

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU number ParseCPUs reads: 1023 (the kernel's
// affinity mask as the system call takes it holds 1,024 CPUs).
const MaxCPU = 1023

// ParseCPUs reads a CPU list as taskset -c and /sys/devices/system/cpu
// write it: CPU numbers and ranges separated by commas ("0", "0-1",
// "0,2", "0-3,6"). It returns the CPUs in ascending order, each once; an
// empty list, a reversed range and a number above MaxCPU are refused.
func ParseCPUs(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("want a CPU list (0, 0-1, 0,2)")
	}
	seen := map[int]bool{}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", part, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("%q: %v", part, err)
			}
			if b < a {
				return nil, fmt.Errorf("%q: a range goes up (%d-%d)", part, b, a)
			}
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	slices.Sort(cpus)
	return cpus, nil
}

// parseCPU reads one CPU number.
func parseCPU(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, errors.New("want CPU numbers and ranges separated by commas (0, 0-1, 0,2)")
	}
	if n > MaxCPU {
		return 0, fmt.Errorf("CPU %d is above %d", n, MaxCPU)
	}
	return n, nil
}

// FormatCPUs writes cpus back as a list ParseCPUs reads, with ranges
// where the numbers follow each other ("0-2,5").
func FormatCPUs(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// MachineCPUs returns the CPUs of this machine that are online
// (/sys/devices/system/cpu/online), or 0 to runtime.NumCPU()-1 when that
// file cannot be read.
func MachineCPUs() []int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if cpus, err := ParseCPUs(string(b)); err == nil {
			return cpus
		}
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// CheckCPUs returns an error naming the CPUs of cpus that have is
// missing: "this machine has no CPU 4 (its CPUs: 0-3)".
func CheckCPUs(cpus, have []int) error {
	var missing []int
	for _, c := range cpus {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Errorf("this machine has no CPU %d (its CPUs: %s)", missing[0], FormatCPUs(have))
	case len(missing) > 1:
		return fmt.Errorf("this machine has no CPUs %s (its CPUs: %s)", FormatCPUs(missing), FormatCPUs(have))
	}
	return nil
}

// SplitCPUs divides cpus between the client and the backends, as a
// study's pin: auto does: the client gets the first half rounded down,
// at least one CPU, the backends the rest. With fewer than two CPUs there
// is nothing to divide: both are nil.
func SplitCPUs(cpus []int) (client, backends []int) {
	if len(cpus) < 2 {
		return nil, nil
	}
	n := max(len(cpus)/2, 1)
	return slices.Clone(cpus[:n]), slices.Clone(cpus[n:])
}
