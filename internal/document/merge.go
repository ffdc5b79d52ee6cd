package document

// Generator is one input of a merge (one generator's file) with its own
// figures.
type Generator struct {
	// File is the input file as named on the command line.
	File string `json:"file"`
	// Host is the generator's host name, from the record's environment.
	Host string `json:"host"`
	// Complete counts its complete requests (every level of a sweep).
	Complete int64 `json:"complete_requests"`
	// RequestsPerSecond is its complete requests over its own run time;
	// P99Ms its 99th percentile of the total time, in ms (not set for a
	// sweep: see Levels).
	RequestsPerSecond float64 `json:"requests_per_second"`
	P99Ms             float64 `json:"p99_ms"`
	// ClientCPUPercent is its client CPU in percent of one core (the
	// sweep's highest level).
	ClientCPUPercent float64 `json:"client_cpu_percent"`
	// Levels, for a sweep, has its figures per series and level.
	Levels []GeneratorLevel `json:"levels,omitempty"`
}

// GeneratorLevel is one generator's figures at one level of a sweep.
type GeneratorLevel struct {
	// Label names the series, Concurrency the level; Complete,
	// RequestsPerSecond and P99Ms (in ms) are the generator's own figures
	// there.
	Label             string  `json:"label"`
	Concurrency       int     `json:"concurrency"`
	Complete          int64   `json:"complete_requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	P99Ms             float64 `json:"p99_ms"`
}

// MergeInfo says how records were merged.
type MergeInfo struct {
	// WindowSeconds is the merged window: from the earliest start to the
	// latest end of the inputs, in seconds (the lowest across the levels
	// of a sweep).
	WindowSeconds float64 `json:"window_seconds"`
	// Overlap is the part of the window during which every input ran,
	// from 0 to 1 (the lowest across the levels of a sweep).
	Overlap float64 `json:"overlap"`
	// Forced reports records of different plans merged with --force;
	// PlanDifferences says how they differ.
	Forced          bool     `json:"forced"`
	PlanDifferences []string `json:"plan_differences,omitempty"`
	// Warnings are the merge's warnings (windows that overlap too little,
	// levels left out).
	Warnings []string `json:"warnings"`
}
