package trials

import (
	"fmt"
	"strconv"
	"strings"
)

// Factors are what a series is made of, the settings a study changes one
// at a time: how it speaks to the backend, over what, and which backend.
// Commands derive them from a series' plan (its target and flags), never
// from its label's text.
type Factors struct {
	// Protocol is "fcgi" or "http".
	Protocol string
	// Transport is "tcp" or "unix".
	Transport string
	// KeepAlive is whether connections are kept (keep-alive, FCGI_KEEP_CONN).
	KeepAlive bool
	// HTTPVersion is "1.1" or "1.0" ("" for FastCGI).
	HTTPVersion string
	// TLS is whether the target is https.
	TLS bool
	// Upstreams is the number of addresses of a cluster target (1 for a
	// plain target).
	Upstreams int
	// Backend names the backend: the series' label as the user gave it
	// (LABEL=URL, bench --label), "" when unnamed.
	Backend string
}

// Factor names, in the order comparisons are grouped.
const (
	FactorTransport   = "transport"
	FactorKeepAlive   = "keep-alive"
	FactorProtocol    = "protocol"
	FactorHTTPVersion = "http version"
	FactorTLS         = "tls"
	FactorUpstreams   = "upstreams"
	FactorBackend     = "backend"
	// FactorNone names the pair of two saved runs that differ in no
	// factor (compare: the same series before and after a change).
	FactorNone = "run"
)

// FactorOrder lists the factors in the order of Differences and of the
// groups of a comparisons table.
var FactorOrder = []string{FactorTransport, FactorKeepAlive, FactorProtocol, FactorHTTPVersion, FactorTLS, FactorUpstreams, FactorBackend}

// Level is the text of factor name in f: "unix", "on", "fcgi", "1.0",
// "3 upstreams", the backend's label ("unnamed" for "").
func (f Factors) Level(name string) string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	switch name {
	case FactorTransport:
		return f.Transport
	case FactorKeepAlive:
		return onOff(f.KeepAlive)
	case FactorProtocol:
		return f.Protocol
	case FactorHTTPVersion:
		if f.HTTPVersion == "" {
			return "none"
		}
		return "HTTP/" + f.HTTPVersion
	case FactorTLS:
		return onOff(f.TLS)
	case FactorUpstreams:
		return strconv.Itoa(f.Upstreams)
	case FactorBackend:
		if f.Backend == "" {
			return "unnamed"
		}
		return f.Backend
	}
	return ""
}

// Differences lists the factors in which a and b differ, in FactorOrder.
func Differences(a, b Factors) []string {
	var d []string
	for _, name := range FactorOrder {
		if a.Level(name) != b.Level(name) {
			d = append(d, name)
		}
	}
	return d
}

// IsBaseline reports whether a is the baseline side of a pair that
// differs only in factor name (not the backend) from b: the usual setting
// is the baseline (TCP, keep-alive off, HTTP rather than FastCGI,
// HTTP/1.1, no TLS, fewer upstreams).
func IsBaseline(name string, a, b Factors) bool {
	switch name {
	case FactorTransport:
		return a.Transport == "tcp" || (b.Transport != "tcp" && a.Transport < b.Transport)
	case FactorKeepAlive:
		return !a.KeepAlive
	case FactorProtocol:
		// Factor values are data (a protocol's name as the record keeps
		// it), compared to order a pair, not to pick a protocol's code:
		// the registry's rule (internal/protocol) does not apply here.
		return a.Protocol == "http" || (b.Protocol != "http" && a.Protocol < b.Protocol)
	case FactorHTTPVersion:
		return a.HTTPVersion == "1.1" || (b.HTTPVersion != "1.1" && a.HTTPVersion < b.HTTPVersion)
	case FactorTLS:
		return !a.TLS
	case FactorUpstreams:
		return a.Upstreams < b.Upstreams
	}
	return true
}

// Pair is two series that differ in exactly one factor: Series against
// Baseline (indexes into the series paired).
type Pair struct {
	Series, Baseline int
	// Factor is the factor in which they differ.
	Factor string
}

// Title is the group heading of the pair: "transport: unix vs tcp".
func (p Pair) Title(fs []Factors) string {
	return fmt.Sprintf("%s: %s vs %s", p.Factor, fs[p.Series].Level(p.Factor), fs[p.Baseline].Level(p.Factor))
}

// Pairs returns the pairs of series that differ in exactly one factor,
// grouped by factor (in FactorOrder), each with its baseline side chosen
// by the factor's rule (see IsBaseline). baseBackend, if not "", narrows
// the backend factor to pairs against that backend. Series whose factors
// are all the same as another's are not paired with it (nothing differs
// to compare). Unpaired lists the series that got into no pair although
// there were others: they differ from every other series in more than
// one factor.
func Pairs(fs []Factors, baseBackend string) (pairs []Pair, unpaired []int) {
	in := make([]bool, len(fs))
	names := LabelsAreNames(fs)
	for _, name := range FactorOrder {
		for i := range fs {
			for j := i + 1; j < len(fs); j++ {
				d := Differences(fs[i], fs[j])
				if names && len(d) == 2 && d[1] == FactorBackend {
					// Labels that are names: the one setting that
					// differs is what the two series compare.
					d = d[:1]
				}
				if len(d) != 1 || d[0] != name {
					continue
				}
				s, b := j, i
				if name == FactorBackend {
					// Several backends: every one against the baseline
					// backend (the first series', or baseBackend), none
					// against another.
					base := baseBackend
					if base == "" {
						base = fs[0].Backend
					}
					switch base {
					case fs[i].Backend:
					case fs[j].Backend:
						s, b = i, j
					default:
						continue
					}
				} else if !IsBaseline(name, fs[i], fs[j]) {
					s, b = i, j
				}
				pairs = append(pairs, Pair{Series: s, Baseline: b, Factor: name})
				in[i], in[j] = true, true
			}
		}
	}
	if len(fs) > 1 {
		for i, ok := range in {
			if !ok {
				unpaired = append(unpaired, i)
			}
		}
	}
	return pairs, unpaired
}

// LabelsAreNames reports whether the labels of fs name series rather than
// backends: there are at least two series, every one has a label, and no
// label is given to more than one series, and no two series differ in
// their labels alone. A study that labels its series
// "tcp" and "unix" means one backend reached two ways; one that names a
// backend on several series ("serial" over TCP and over Unix) says which
// series share a backend, and two series alike but for their labels are
// two backends. With names, Pairs pairs two series that differ in one
// setting besides their labels on that setting.
func LabelsAreNames(fs []Factors) bool {
	if len(fs) < 2 {
		return false
	}
	seen := make(map[string]bool, len(fs))
	settings := make(map[Factors]bool, len(fs))
	for _, f := range fs {
		if f.Backend == "" || seen[f.Backend] {
			return false
		}
		seen[f.Backend] = true
		f.Backend = ""
		if settings[f] {
			// Two series alike but for their labels: the labels
			// tell backends apart.
			return false
		}
		settings[f] = true
	}
	return true
}

// DescribeDifferences is "transport unix vs tcp, backend b vs a": how
// a differs from b, for the notes of pairs not compared.
func DescribeDifferences(a, b Factors) string {
	var parts []string
	for _, name := range Differences(a, b) {
		parts = append(parts, fmt.Sprintf("%s %s vs %s", name, a.Level(name), b.Level(name)))
	}
	return strings.Join(parts, ", ")
}

// Match is a series of another saved run that a series is compared with.
type Match struct {
	// Index is the other series' index.
	Index int
	// Factor is the factor in which the two differ (FactorNone for none)
	// and Title the group heading ("" for FactorNone).
	Factor, Title string
	// Swap says that the other series is the new side of the pair and
	// this one the baseline (the factor's rule: TCP, keep-alive off...).
	Swap bool
}

// MatchSeries finds, among the series of an older run (their labels and
// factors), the ones a series of a newer run is compared with: the series
// of the same label when byLabel (two sweeps) and it differs from it in
// at most one factor; else every series that differs from it in no
// factor (the first) or, failing that, in exactly one. why says, when
// nothing matches, how the closest one differs.
func MatchSeries(label string, f Factors, labels []string, olds []Factors, byLabel bool) (ms []Match, why string) {
	match := func(i int, d []string) Match {
		m := Match{Index: i, Factor: FactorNone}
		if len(d) == 1 {
			m.Factor = d[0]
			m.Swap = d[0] != FactorBackend && IsBaseline(d[0], f, olds[i])
			if m.Swap {
				m.Title = fmt.Sprintf("%s: %s vs %s", d[0], olds[i].Level(d[0]), f.Level(d[0]))
			} else {
				m.Title = fmt.Sprintf("%s: %s vs %s", d[0], f.Level(d[0]), olds[i].Level(d[0]))
			}
		}
		return m
	}
	if byLabel {
		for i, l := range labels {
			if d := Differences(f, olds[i]); l == label && len(d) <= 1 {
				return []Match{match(i, d)}, ""
			}
		}
	}
	closest := -1
	for i := range olds {
		d := Differences(f, olds[i])
		switch {
		case len(d) == 0:
			return []Match{match(i, d)}, ""
		case len(d) == 1:
			ms = append(ms, match(i, d))
		case closest < 0 || len(d) < len(Differences(f, olds[closest])):
			closest = i
		}
	}
	if len(ms) == 0 {
		why = "no series"
		if closest >= 0 {
			why = fmt.Sprintf("it differs in more than one factor from every series (from %s in %s)", labels[closest], DescribeDifferences(f, olds[closest]))
		}
	}
	return ms, why
}
