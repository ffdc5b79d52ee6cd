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
// The HTTP version counts only between two series that both have one: a
// protocol without HTTP versions (FastCGI) against HTTP differs in the
// protocol, which says it.
func Differences(a, b Factors) []string {
	var d []string
	for _, name := range FactorOrder {
		if name == FactorHTTPVersion && (a.HTTPVersion == "" || b.HTTPVersion == "") {
			continue
		}
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

// Pair is two series compared on one factor: Series against Baseline
// (indexes into the series paired).
type Pair struct {
	Series, Baseline int
	// Factor is the factor compared: the one in which they differ, or,
	// for two backends that differ in more than the backend, the backend.
	Factor string
	// Also lists, for a backend pair (FactorBackend), the other factors
	// in which the two differ, in FactorOrder: what comes with the
	// backend (its protocol, its transport...); nil when the backend is
	// all that differs.
	Also []string
}

// Title is the group heading of the pair: "transport: unix vs tcp";
// with the other differences of a backend pair, "backend: starman vs
// fcgi, over HTTP rather than FastCGI".
func (p Pair) Title(fs []Factors) string {
	t := title(p.Factor, fs[p.Series], fs[p.Baseline])
	if len(p.Also) > 0 {
		t += ", " + p.AlsoText(fs)
	}
	return t
}

// AlsoText says how the series side of p differs from its baseline
// besides the factor compared: "over HTTP rather than FastCGI, with
// keep-alive rather than without"; "" when nothing else differs.
func (p Pair) AlsoText(fs []Factors) string {
	var parts []string
	for _, name := range p.Also {
		parts = append(parts, Rather(name, fs[p.Series], fs[p.Baseline]))
	}
	return strings.Join(parts, ", ")
}

// protocolWords are the names a sentence gives a protocol; a protocol
// not listed is named as the record keeps it.
var protocolWords = map[string]string{"http": "HTTP", "fcgi": "FastCGI"}

// Rather says how a differs from b in factor name, as a sentence would:
// "over a Unix socket rather than TCP", "over HTTP rather than FastCGI",
// "with keep-alive rather than without", "over TLS rather than plain",
// "with HTTP/1.0 rather than HTTP/1.1", "across 3 upstreams rather than
// 1", "backend b rather than a".
func Rather(name string, a, b Factors) string {
	switch name {
	case FactorTransport:
		w := func(t string) string {
			switch t {
			case "unix":
				return "a Unix socket"
			case "tcp":
				return "TCP"
			}
			return t
		}
		return fmt.Sprintf("over %s rather than %s", w(a.Transport), w(b.Transport))
	case FactorKeepAlive:
		if a.KeepAlive {
			return "with keep-alive rather than without"
		}
		return "without keep-alive rather than with"
	case FactorProtocol:
		w := func(p string) string {
			if s, ok := protocolWords[p]; ok {
				return s
			}
			return p
		}
		return fmt.Sprintf("over %s rather than %s", w(a.Protocol), w(b.Protocol))
	case FactorHTTPVersion:
		return fmt.Sprintf("with %s rather than %s", a.Level(name), b.Level(name))
	case FactorTLS:
		if a.TLS {
			return "over TLS rather than plain"
		}
		return "without TLS rather than over it"
	case FactorUpstreams:
		return fmt.Sprintf("across %d upstreams rather than %d", a.Upstreams, b.Upstreams)
	}
	return fmt.Sprintf("%s %s rather than %s", name, a.Level(name), b.Level(name))
}

// Pairs returns the pairs of series to compare, grouped by factor (in
// FactorOrder), the one-factor pairs first. The rule, for what a command
// infers from its URLs, labels and flags:
//
//   - Two series that differ in exactly one factor are paired on it, with
//     the baseline side chosen by the factor's rule (see IsBaseline).
//   - When the labels name the ways one backend is reached
//     (LabelsAreNames: "t=tcp-URL u=unix-URL", keep-alive modes or not),
//     two series that differ in one setting besides their labels are
//     paired on that setting: transport at each keep-alive mode,
//     keep-alive on each transport. A protocol is not a way of reaching
//     one backend: labels that differ in protocol are backends.
//   - Backends are paired with the baseline backend (the first series',
//     or baseBackend), never with each other.
//   - A group of series that the pairs above leave apart from every
//     series of the baseline backend (nothing joins them, pair by pair)
//     is compared with it on the backend, as a deployment: each of its
//     series that is closest to a baseline series (fewest factors apart,
//     the fewest of the group) with the first such series, the other
//     differences in Pair.Also ("fcgi=fcgi://... starman=http://...":
//     backend, over HTTP rather than FastCGI).
//
// Series whose factors are all the same as another's are not paired with
// it (nothing differs to compare). Unpaired lists the series that got
// into no pair although there were others: nothing can be paired with
// them (two unlabelled series two factors apart, say).
func Pairs(fs []Factors, baseBackend string) (pairs []Pair, unpaired []int) {
	in := make([]bool, len(fs))
	names := LabelsAreNames(fs)
	base := baseBackend
	if base == "" && len(fs) > 0 {
		base = fs[0].Backend
	}
	// group[i] is the group of series i: the series joined to it by
	// pairs (union-find).
	group := make([]int, len(fs))
	for i := range group {
		group[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		if group[i] != i {
			group[i] = root(group[i])
		}
		return group[i]
	}
	add := func(p Pair) {
		pairs = append(pairs, p)
		in[p.Series], in[p.Baseline] = true, true
		group[root(p.Series)] = root(p.Baseline)
	}
	for _, name := range FactorOrder {
		for i := range fs {
			for j := i + 1; j < len(fs); j++ {
				f, iBase, ok := oneFactor(fs[i], fs[j], names)
				if !ok || f != name {
					continue
				}
				s, b := j, i
				if name == FactorBackend {
					// Several backends: every one against the baseline
					// backend, none against another.
					switch base {
					case fs[i].Backend:
					case fs[j].Backend:
						s, b = i, j
					default:
						continue
					}
				} else if !iBase {
					s, b = i, j
				}
				add(Pair{Series: s, Baseline: b, Factor: name})
			}
		}
	}
	// The groups apart from the baseline backend: compared with it as
	// deployments, on the backend, the other differences named.
	joined := map[int]bool{}
	for i := range fs {
		if fs[i].Backend == base {
			joined[root(i)] = true
		}
	}
	type near struct{ b, d int }
	closest := make([]near, len(fs))
	best := map[int]int{}
	for i := range fs {
		closest[i] = near{-1, 0}
		if fs[i].Backend == base || joined[root(i)] {
			continue
		}
		for j := range fs {
			if fs[j].Backend != base {
				continue
			}
			if d := len(Differences(fs[i], fs[j])); closest[i].b < 0 || d < closest[i].d {
				closest[i] = near{j, d}
			}
		}
		if c := closest[i]; c.b >= 0 {
			if m, ok := best[root(i)]; !ok || c.d < m {
				best[root(i)] = c.d
			}
		}
	}
	var late []Pair
	for i, c := range closest {
		if c.b < 0 || c.d != best[root(i)] {
			continue
		}
		var also []string
		for _, name := range Differences(fs[i], fs[c.b]) {
			if name != FactorBackend {
				also = append(also, name)
			}
		}
		late = append(late, Pair{Series: i, Baseline: c.b, Factor: FactorBackend, Also: also})
	}
	// Grouped by factor: the backend pairs of deployments go after the
	// other backend pairs.
	for _, p := range late {
		pairs = append(pairs, p)
		in[p.Series], in[p.Baseline] = true, true
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

// oneFactor is the rule of a one-factor pair, for the pairs of one run
// (Pairs) and across two (MatchSeries): it returns the one factor in
// which a and b differ (Differences), if they differ in one (with names,
// LabelsAreNames, their labels aside unless what differs besides them is
// the protocol), and whether a is the baseline side of the pair by that
// factor's rule (IsBaseline; never for the backend, whose baseline the
// caller picks).
func oneFactor(a, b Factors, names bool) (name string, aBase, ok bool) {
	d := Differences(a, b)
	if names && len(d) == 2 && d[1] == FactorBackend && d[0] != FactorProtocol {
		d = d[:1]
	}
	if len(d) != 1 {
		return "", false, false
	}
	return d[0], d[0] != FactorBackend && IsBaseline(d[0], a, b), true
}

// title is the heading of a pair on factor name: "transport: unix vs
// tcp", the series' level first.
func title(name string, series, baseline Factors) string {
	return fmt.Sprintf("%s: %s vs %s", name, series.Level(name), baseline.Level(name))
}

// LabelsAreNames reports whether the labels of fs name the ways one
// backend is reached rather than backends: there are at least two
// labels, every series has one, each label is on one target (its series
// differ at most in the settings a command applies to every target:
// keep-alive, HTTP version), and no two series differ in their labels
// alone. A study that labels its URLs "tcp" and "unix" (with
// --keepalive-modes on,off or not) means one backend reached two ways;
// one that gives a label to several URLs ("serial" over TCP and over
// Unix) says which series share a backend, and two series alike but for
// their labels are two backends. With names, Pairs pairs two series that
// differ in one setting besides their labels on that setting.
func LabelsAreNames(fs []Factors) bool {
	targets := make(map[string]Factors, len(fs))
	settings := make(map[Factors]string, len(fs))
	for _, f := range fs {
		if f.Backend == "" {
			return false
		}
		label := f.Backend
		f.Backend = ""
		if l, ok := settings[f]; ok && l != label {
			// Two series alike but for their labels: the labels
			// tell backends apart.
			return false
		}
		settings[f] = label
		f.KeepAlive, f.HTTPVersion = false, ""
		if t, ok := targets[label]; ok && t != f {
			// A label on two targets names their backend.
			return false
		}
		targets[label] = f
	}
	return len(targets) >= 2
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
	match := func(i int) Match {
		m := Match{Index: i, Factor: FactorNone}
		if name, newBase, ok := oneFactor(f, olds[i], false); ok {
			m.Factor, m.Swap, m.Title = name, newBase, title(name, f, olds[i])
			if newBase {
				m.Title = title(name, olds[i], f)
			}
		}
		return m
	}
	if byLabel {
		for i, l := range labels {
			if l == label && len(Differences(f, olds[i])) <= 1 {
				return []Match{match(i)}, ""
			}
		}
	}
	closest := -1
	for i := range olds {
		d := Differences(f, olds[i])
		switch {
		case len(d) == 0:
			return []Match{match(i)}, ""
		case len(d) == 1:
			ms = append(ms, match(i))
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
