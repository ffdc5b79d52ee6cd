package load

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxLevel is the highest concurrency a level may have (the same bound as
// bench's -c).
const MaxLevel = 1_000_000

// MaxLevels is the largest number of levels a spec may produce.
const MaxLevels = 10_000

// ParseLevels reads a concurrency spec: comma-separated items, each either a
// level ("16") or a range "start:end:step" that expands to start,
// start+step, ... below end, and end itself (so "1:500:10" gives 1, 11, 21
// ... 491, 500, the levels of the 2008 study). Spaces around items are
// ignored. The levels must come out strictly increasing, from 1 to MaxLevel,
// and there may be at most MaxLevels of them.
func ParseLevels(spec string) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("empty concurrency spec (want start:end:step like 1:500:10, or a list like 1,2,4,8)")
	}
	var levels []int
	add := func(v int) error {
		if n := len(levels); n > 0 && v <= levels[n-1] {
			return fmt.Errorf("concurrency spec %q: levels must increase (%d after %d)", spec, v, levels[n-1])
		}
		if len(levels) == MaxLevels {
			return fmt.Errorf("concurrency spec %q: more than %d levels", spec, MaxLevels)
		}
		levels = append(levels, v)
		return nil
	}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		parts := strings.Split(item, ":")
		switch len(parts) {
		case 1:
			v, err := parseLevel(spec, parts[0])
			if err != nil {
				return nil, err
			}
			if err := add(v); err != nil {
				return nil, err
			}
		case 3:
			start, err := parseLevel(spec, parts[0])
			if err != nil {
				return nil, err
			}
			end, err := parseLevel(spec, parts[1])
			if err != nil {
				return nil, err
			}
			step, err := parseLevel(spec, parts[2])
			if err != nil {
				return nil, fmt.Errorf("concurrency spec %q: bad step %q (want 1 to %d)", spec, parts[2], MaxLevel)
			}
			if end < start {
				return nil, fmt.Errorf("concurrency spec %q: range %q ends before it starts", spec, item)
			}
			// Both bounded by MaxLevel, so v+step cannot overflow.
			for v := start; v < end; v += step {
				if err := add(v); err != nil {
					return nil, err
				}
			}
			if err := add(end); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("concurrency spec %q: bad item %q (want N or start:end:step)", spec, item)
		}
	}
	return levels, nil
}

func parseLevel(spec, s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 1 || v > MaxLevel {
		return 0, fmt.Errorf("concurrency spec %q: bad level %q (want 1 to %d)", spec, s, MaxLevel)
	}
	return v, nil
}

// FormatLevels writes levels as a list that ParseLevels reads back.
func FormatLevels(levels []int) string {
	var b strings.Builder
	for i, v := range levels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}
