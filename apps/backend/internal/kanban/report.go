package kanban

// Bounds of a session.report_calls payload: a bridge reports one entry
// per tool and outcome it saw since its last report, so these are far
// above what a real bridge sends (its tools × the wrapper's outcomes).
const (
	MaxReportedCalls     = 512    // entries of one report
	MaxReportedCallCount = 100000 // calls one entry may count
	MaxReportedToolLen   = 128    // a tool's name
	MaxReportedOutcome   = 32     // an outcome's name
)
