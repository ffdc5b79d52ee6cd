package main

import "github.com/backbench/backbench/internal/execute"

// checkFiles refuses, as a usage error found before any connection is
// made, a concurrency whose connections the file limit cannot hold even
// raised to its hard limit (execute.FileLimit); what names the concurrency
// in the message ("-c 30000", "sweep: the highest level, 30000,").
func checkFiles(what string, concurrency int) error {
	need, limit, ok := execute.FileLimit(concurrency)
	if ok {
		return nil
	}
	return usagef("%s needs %d open files (one per connection and %d for the rest), more than the limit of %d (RLIMIT_NOFILE, raised to its hard limit): use at most %d, or raise the hard limit (ulimit -Hn; LimitNOFILE= for a service)",
		what, need, need-uint64(concurrency), limit, execute.MaxConcurrency())
}
