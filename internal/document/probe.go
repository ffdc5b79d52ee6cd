package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// ProbeTarget is the address a probe checked.
type ProbeTarget struct {
	// URL is the target as given; Protocol its scheme; Network and
	// Address where it was reached ("tcp", "127.0.0.1:80").
	URL      string `json:"url"`
	Protocol string `json:"protocol"`
	Network  string `json:"network"`
	Address  string `json:"address"`
}

// ProbeField is one key of a probe's checks object, in the protocol's
// order: a check (an object with a verdict) or another key of the
// protocol's report (fcgi's crashed_on).
type ProbeField struct {
	// Key is the check's name (its JSON key).
	Key string
	// Value is the key's JSON as the protocol wrote it.
	Value json.RawMessage
	// Check is the check's outcome, nil for a key that is no check.
	Check *ProbeCheck
}

// ProbeCheck is one check's outcome as read: its verdict, its evidence
// and its other keys (its numbers) sorted by name.
type ProbeCheck struct {
	// Verdict is the check's verdict word, Evidence what it saw.
	Verdict, Evidence string
	// Numbers are the check's other keys with their values decoded
	// (numbers, strings, booleans, nil, lists and maps of them).
	Numbers []ProbeNumber
}

// ProbeNumber is one key of a check beside its verdict and evidence.
type ProbeNumber struct {
	// Key is the key's name, Value its decoded value.
	Key   string
	Value any
}

// Probe is the report of backbench probe for one address: the target,
// the timeout of one exchange, every check of the protocol's probe under
// its own key at the top of the object, and the summary lines.
//
// Its JSON is written by MarshalJSON because the checks are an open set
// of keys (each protocol's report object) kept at the top of the object
// for the files earlier versions wrote; the object is encoded key by key,
// never spliced from encoded objects.
type Probe struct {
	// Kind is KindProbe.
	Kind Kind
	// Target is the address probed; TimeoutSeconds bounds one exchange.
	Target         ProbeTarget
	TimeoutSeconds float64
	// Checks are the protocol's report, key by key in its order.
	Checks []ProbeField
	// Summary is the "For benchmarking" advice, one sentence a line.
	Summary []string
	// Meta is what Read found.
	Meta Meta
}

// NewProbe returns the probe of one address from a protocol's report
// (protocol.ProbeResult.Report: a JSON object of its checks).
func NewProbe(target ProbeTarget, timeoutSeconds float64, report any, summary []string) (*Probe, error) {
	b, err := json.Marshal(report)
	if err != nil {
		return nil, fmt.Errorf("document: probe report: %v", err)
	}
	fields, err := object(b)
	if err != nil {
		return nil, fmt.Errorf("document: probe report: %v", err)
	}
	return &Probe{Target: target, TimeoutSeconds: timeoutSeconds, Checks: probeFields(fields), Summary: summary}, nil
}

// field is one key of a JSON object with its raw value.
type field struct {
	key string
	raw json.RawMessage
}

// object returns the keys of the JSON object data in order, with their
// raw values.
func object(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, field{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

// probeFields reads every field as a check where it is one (an object
// with a verdict).
func probeFields(fields []field) []ProbeField {
	out := make([]ProbeField, 0, len(fields))
	for _, f := range fields {
		out = append(out, ProbeField{Key: f.key, Value: f.raw, Check: probeCheck(f.raw)})
	}
	return out
}

// probeCheck reads raw as a check: an object with a string "verdict";
// nil for anything else.
func probeCheck(raw json.RawMessage) *ProbeCheck {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return nil
	}
	var c map[string]json.RawMessage
	if json.Unmarshal(raw, &c) != nil || c["verdict"] == nil {
		return nil
	}
	var pc ProbeCheck
	_ = json.Unmarshal(c["verdict"], &pc.Verdict)
	_ = json.Unmarshal(c["evidence"], &pc.Evidence)
	keys := make([]string, 0, len(c))
	for k := range c {
		if k != "verdict" && k != "evidence" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v any
		_ = json.Unmarshal(c[k], &v)
		pc.Numbers = append(pc.Numbers, ProbeNumber{Key: k, Value: v})
	}
	return &pc
}

// MarshalJSON writes the probe's keys in order: kind (when set), target,
// timeout_seconds, the checks, summary.
func (p *Probe) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	put := func(key string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	if p.Kind != "" {
		// An address of a range has no kind of its own.
		if err := put("kind", p.Kind); err != nil {
			return nil, err
		}
	}
	if err := put("target", p.Target); err != nil {
		return nil, err
	}
	if err := put("timeout_seconds", p.TimeoutSeconds); err != nil {
		return nil, err
	}
	for _, f := range p.Checks {
		if err := put(f.Key, f.Value); err != nil {
			return nil, err
		}
	}
	if err := put("summary", p.Summary); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a probe's object: its named keys, and every other
// key (but kind) as a field of its checks, in order.
func (p *Probe) UnmarshalJSON(data []byte) error {
	fields, err := object(data)
	if err != nil {
		return err
	}
	var rest []field
	for _, f := range fields {
		var err error
		switch f.key {
		case "kind":
			err = json.Unmarshal(f.raw, &p.Kind)
		case "target":
			err = json.Unmarshal(f.raw, &p.Target)
		case "timeout_seconds":
			err = json.Unmarshal(f.raw, &p.TimeoutSeconds)
		case "summary":
			err = json.Unmarshal(f.raw, &p.Summary)
		default:
			rest = append(rest, f)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", f.key, err)
		}
	}
	p.Checks = probeFields(rest)
	return nil
}

// ProbeRange is the report of a probe over a {A..B} port range: one
// report per address (or the target and why it was not reached) and the
// checks whose verdicts differ between the addresses probed. Saved as
// kind "probe".
type ProbeRange struct {
	// Kind is KindProbe.
	Kind Kind `json:"kind"`
	// URL is the range as given.
	URL string `json:"url"`
	// Addresses are the addresses in order.
	Addresses []ProbeAddress `json:"addresses"`
	// Disagreements are the checks whose verdicts differ.
	Disagreements []ProbeDisagreement `json:"disagreements"`
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// ProbeAddress is one address of a range: its probe, or (Probe nil) its
// target and why it could not be reached.
type ProbeAddress struct {
	// Probe is the address's probe (nil: not reached).
	Probe *Probe
	// Target and Error are set for an address not reached.
	Target ProbeTarget
	Error  string
}

// unreached is the JSON of an address not reached.
type unreached struct {
	Target ProbeTarget `json:"target"`
	Error  string      `json:"error"`
}

// MarshalJSON writes the probe, or the target and the error.
func (a ProbeAddress) MarshalJSON() ([]byte, error) {
	if a.Probe != nil {
		// The range carries the kind, not its addresses.
		q := *a.Probe
		q.Kind = ""
		return q.MarshalJSON()
	}
	return json.Marshal(unreached{a.Target, a.Error})
}

// UnmarshalJSON reads a probe, or an address not reached (one with an
// "error").
func (a *ProbeAddress) UnmarshalJSON(data []byte) error {
	var u struct {
		Target ProbeTarget `json:"target"`
		Error  *string     `json:"error"`
	}
	if err := json.Unmarshal(data, &u); err != nil {
		return err
	}
	if u.Error != nil {
		a.Target, a.Error = u.Target, *u.Error
		return nil
	}
	a.Probe = &Probe{}
	return a.Probe.UnmarshalJSON(data)
}

// ProbeDisagreement is a check whose verdict differs between addresses:
// the verdicts by address.
type ProbeDisagreement struct {
	// Check is the check's name; Verdicts its verdict by address
	// ("tcp:127.0.0.1:9000").
	Check    string            `json:"check"`
	Verdicts map[string]string `json:"verdicts"`
}
