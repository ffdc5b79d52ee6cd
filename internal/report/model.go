package report

import "github.com/backbench/backbench/internal/document"

// The saved types that the renderers draw, as the result model
// (internal/document) defines them: named here so that a renderer's
// signature reads as it always did.
type (
	// Sweep is a saved sweep (document.Sweep).
	Sweep = document.Sweep
	// SweepSeries is one series of a sweep (document.SweepSeries).
	SweepSeries = document.SweepSeries
	// SweepStop says where and why a series was stopped (document.SweepStop).
	SweepStop = document.SweepStop
	// SweepTrials is what a sweep of trials adds (document.SweepTrials).
	SweepTrials = document.SweepTrials
	// Generator is one input of a merge (document.Generator).
	Generator = document.Generator
	// GeneratorLevel is one generator's figures at one level of a sweep
	// (document.GeneratorLevel).
	GeneratorLevel = document.GeneratorLevel
	// MergeInfo says how records were merged (document.MergeInfo).
	MergeInfo = document.MergeInfo
)
