package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the units of ParseSize, in bytes.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1e12, "tib": 1 << 40,
}

// ParseSize reads a size in bytes: a number and a unit, "2GiB", "512MiB",
// "1.5G" (K, M, G and T are powers of 1024, as KiB; KB, MB, GB and TB
// powers of 1000), or a bare number of bytes; more than 0 and below 2^62
// bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mul, ok := sizeUnits[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(v > 0) || math.IsInf(v*mul, 0) || v*mul >= 1<<62 {
		return 0, fmt.Errorf("want a size, e.g. 2GiB, 512MiB or 1500MB, not %q", s)
	}
	return int64(v * mul), nil
}
