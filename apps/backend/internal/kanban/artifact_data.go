package kanban

// What the data of each artifact kind may hold: the bounds and enums that
// the publishing tools' schemas advertise and the action layer applies.

// Bounds of a walkthrough and of review findings.
const (
	MaxArtifactTitleLen = 200        // a walkthrough's, a step's or a finding's title
	MaxLineNumber       = 10_000_000 // a 1-based line of a file
	MaxWalkSteps        = 50         // steps of a walkthrough
	MaxWalkTextLen      = 4000       // a walkthrough step's text
	MaxFindings         = 100        // findings of one review
	MaxFindingTextLen   = 8000       // a finding's body or suggestion
	MaxFindingSummary   = 4000       // a review's overall verdict
	MaxFindingCategory  = 50         // a finding's category
)

// FindingSeverities are a review finding's severities, most severe first.
var FindingSeverities = []string{"blocker", "major", "minor", "nit"}

// Bounds of rich output (show_rich_output_kandev) and of what the backend
// reads for it from the task's workspace.
const (
	MaxRichBlocks     = 4         // blocks of one presentation
	MaxRichTitleLen   = 120       // a presentation's, file's or chart's title
	MaxRichTextLen    = 500       // a description, caption, summary or metric detail
	MaxRichPathLen    = 1024      // a workspace-relative path
	MaxRichMimeLen    = 128       // a file block's media type
	MaxChartLabels    = 100       // a chart's x-axis labels (a CSV chart's data rows)
	MaxChartSeries    = 4         // series of one chart
	MaxChartLabelLen  = 120       // a label, legend or column header
	MaxMetricItems    = 6         // metrics of one block
	MaxMetricValueLen = 200       // a metric's value as shown
	MaxCSVBytes       = 256 << 10 // a CSV chart's source file
)

// ChartTypes are the kinds of chart a rich output block draws.
var ChartTypes = []string{"line", "bar"}

// Bounds of a step completion (step_complete_kandev) and of a step
// decision (record_step_decision_kandev).
const (
	MaxStepSummaryLen    = 4000
	MaxStepHandoffLen    = 10_000
	MaxStepBlockersLen   = 4000
	MaxDecisionReasonLen = 2000
)

// Step decisions.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
)

// Decisions lists the step decisions.
var Decisions = []string{DecisionApproved, DecisionRejected}
