package main

import (
	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/stats"
)

// shareOptions are the flags that say what a result file keeps of the
// command line and the machine: by default no credential (load.RedactArgs)
// and the host name.
type shareOptions struct {
	keepSecrets bool
	noHostname  bool
}

// addShareFlags adds --keep-secrets and, when hostname is true, --no-hostname.
func addShareFlags(fs *pflag.FlagSet, o *shareOptions, hostname bool) {
	fs.BoolVar(&o.keepSecrets, "keep-secrets", false, "keep the credentials of the command line (-H Authorization/Cookie values, -A, -C, secret-looking --param values) in what is written, for a private file; by default they read REDACTED")
	if hostname {
		fs.BoolVar(&o.noHostname, "no-hostname", false, "leave the machine's host name out of the results (environment.hostname is empty)")
	}
}

// privacy is the stats.Privacy of o, with the one-letter flags of fs that
// take a value (so that a cluster like -kHvalue is read as pflag reads it);
// a nil fs means load.DefaultValueShorts, the flags of bench and sweep.
func (o shareOptions) privacy(fs *pflag.FlagSet) stats.Privacy {
	p := stats.Privacy{KeepSecrets: o.keepSecrets, NoHostname: o.noHostname}
	if fs == nil {
		return p
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Shorthand != "" && f.NoOptDefVal == "" {
			p.ValueShorts += f.Shorthand
		}
	})
	return p
}

// host is a generator's host name as merge writes it: "" with --no-hostname.
func (o shareOptions) host(name string) string {
	if o.noHostname {
		return ""
	}
	return name
}
