package bench

import (
	"encoding/json"
	"fmt"
	"os"
)

// FormatVersion is the version of the results.json layout.
const FormatVersion = 1

// Results is everything one `make bench` run measured: the content of
// bench/results.json and the only input of the generated docs page.
type Results struct {
	FormatVersion  int     `json:"format_version"`
	Date           string  `json:"date"` // RFC 3339, UTC
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Machine        Machine `json:"machine"`
	// KandevVersion is what the measured binary's `kandev version` printed
	// (the git description it was built from).
	KandevVersion string `json:"kandev_version"`
	// Commands are the exact commands that produced these results.
	Commands []string `json:"commands"`
	Method   Method   `json:"method"`

	Validation []ValidationCase `json:"validation"`
	RoundTrip  []RoundTripPoint `json:"round_trip"`
	Bridge     []BridgePoint    `json:"bridge"`
	ModeSwitch []ModeSwitch     `json:"mode_switch"`
	Compile    LatencyStat      `json:"compile"`
	Store      StoreScale       `json:"store"`
	Catalog    []CatalogMode    `json:"catalog"`
	Board      *BoardResult     `json:"board,omitempty"`
	Agents     *AgentRun        `json:"agents,omitempty"`
	Flow       *FlowRun         `json:"flow,omitempty"`
	Upstream   *UpstreamBench   `json:"upstream,omitempty"`
	Changes    *ChangesBench    `json:"changes,omitempty"`
	Terminal   *TerminalBench   `json:"terminal,omitempty"`
	Postgres   *PostgresRun     `json:"postgres,omitempty"`
	PRWatch    *PRWatchRun      `json:"prwatch,omitempty"`
	Usage      *UsageRun        `json:"usage,omitempty"`
	Routines   *RoutinesRun     `json:"routines,omitempty"`
	// Profiles are CPU profiles of `kandev serve` under section 2's loads.
	Profiles []ServerProfile `json:"profiles,omitempty"`
	// Durability checks section 2's creates against the database after
	// the backend was killed.
	Durability *Durability       `json:"durability,omitempty"`
	Targets    []Target          `json:"targets"`
	Notes      []string          `json:"notes,omitempty"`
	Extra      map[string]string `json:"extra,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUModel  string `json:"cpu_model"`
	Cores     int    `json:"cores"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	GoVersion string `json:"go_version"`
	Kernel    string `json:"kernel,omitempty"`
}

// Method records the knobs of the run.
type Method struct {
	Repetitions      int     `json:"repetitions"`
	MicroRepetitions int     `json:"micro_repetitions"` // of each section-1 micro benchmark
	PointSeconds     float64 `json:"point_seconds"`     // measuring time of one load point
	BenchTime        string  `json:"bench_time"`        // testing.Benchmark time per micro benchmark
	ClientCounts     []int   `json:"client_counts"`
	StoreTasks       int     `json:"store_tasks"`
}

// Micro is one micro benchmark figure (median over repetitions).
type Micro struct {
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
}

// ValidationCase is section 1 for one tool call: the wrapper's argument
// check next to its floor and its alternatives, all in the same run.
type ValidationCase struct {
	Case    string `json:"case"`
	Tool    string `json:"tool"`
	Missing bool   `json:"missing,omitempty"` // the tool is not in the catalog
	Valid   bool   `json:"valid"`             // the arguments are meant to pass
	// Problems is how many problems the wrapper reported (rejected calls).
	Problems int    `json:"problems,omitempty"`
	Note     string `json:"note,omitempty"`

	Wrapper Micro `json:"wrapper"` // Compiled.Check: normalise + validate + message
	// WrapperJSON is Compiled.CheckJSON: the wrapper's decoding of the raw
	// arguments plus Check, the counterpart of mcp-go's figure (which
	// re-encodes and decodes the arguments too).
	WrapperJSON Micro `json:"wrapper_json"`
	Bare        Micro `json:"bare"`  // cached jsonschema Schema.Validate
	Fresh       Micro `json:"fresh"` // compile the schema, then validate, per call
	// MCPGo is mcp-go's WithInputSchemaValidation: HandleMessage tools/call
	// with the option on minus the same call with it off (paired per run).
	MCPGo Micro `json:"mcpgo"`
	// MCPGoRejected reports whether mcp-go refused the call with the option
	// on (it must equal !Valid for the difference to mean anything).
	MCPGoRejected bool `json:"mcpgo_rejected"`

	WrapperOverBare  float64 `json:"wrapper_over_bare"`
	MCPGoOverWrapper float64 `json:"mcpgo_over_wrapper"`
	// MCPGoOverWrapperJSON compares like with like: both sides decode the
	// arguments before validating.
	MCPGoOverWrapperJSON float64 `json:"mcpgo_over_wrapper_json"`
	FreshOverWrapper     float64 `json:"fresh_over_wrapper"`
}

// RoundTripPoint is one load point of section 2.
type RoundTripPoint struct {
	// Target is floor (the no-op floor), list_tasks, list_tasks_5,
	// create_task, or same:<one of those> (its same-bytes floor).
	Target string `json:"target"`
	Tool   string `json:"tool"`
	Args   string `json:"args"`
	// ResponseBytes is the size of one response body; PageBytes the size
	// of its structured content (the JSON the agent reads, once).
	ResponseBytes int `json:"response_bytes"`
	PageBytes     int `json:"page_bytes,omitempty"`
	Clients       int `json:"clients"`
	LoadStat
	// OverFloor is this point's calls/s over the no-op floor's at the same
	// client count, paired per repetition (0 for the floors).
	OverFloor float64 `json:"over_floor,omitempty"`
	// OverSameBytes is the same over this call's same-bytes floor.
	OverSameBytes float64 `json:"over_same_bytes,omitempty"`
	// ServerCPUUs and ClientCPUUs are the CPU time per call of the server
	// process and of the load generator (medians over repetitions; 0 where
	// process CPU times cannot be read).
	ServerCPUUs float64 `json:"server_cpu_us_per_call,omitempty"`
	ClientCPUUs float64 `json:"client_cpu_us_per_call,omitempty"`
}

// ServerProfile is a CPU profile of `kandev serve` under one load point of
// section 2, its samples grouped by what they were doing.
type ServerProfile struct {
	Target  string  `json:"target"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	Calls   int     `json:"calls"`
	Errors  int     `json:"errors"`
	// CPUUs is the sampled CPU time per call; Shares split it.
	CPUUs  float64    `json:"cpu_us_per_call"`
	Shares []CPUShare `json:"shares"`
}

// CPUShare is one group of a profile's samples.
type CPUShare struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`  // of the profile's CPU time
	CPUUs float64 `json:"cpu_us"` // per call
}

// Durability is the check that every acknowledged create survived: after
// section 2 the backend is killed with SIGKILL and its database counted.
type Durability struct {
	// Acknowledged creates: calls answered without an error.
	Acknowledged int `json:"acknowledged"`
	// Found is how many of the tasks the bench made are in the database.
	Found int `json:"found"`
}

// LoadStat is the outcome of a load point: medians over repetitions.
type LoadStat struct {
	CallsPerSec float64 `json:"calls_per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	Calls       int     `json:"calls"`  // total over all repetitions
	Errors      int     `json:"errors"` // total tool or transport errors
}

// BridgePoint is section 3: the same call through `kandev mcp --listen`
// and directly on the backend's /mcp, measured back to back.
type BridgePoint struct {
	Tool       string   `json:"tool"`
	Clients    int      `json:"clients"`
	Direct     LoadStat `json:"direct"`
	Bridge     LoadStat `json:"bridge"`
	AddedP50Ms float64  `json:"added_p50_ms"` // paired per repetition
	AddedP99Ms float64  `json:"added_p99_ms"`
}

// ModeSwitch is section 4 for one mode.
type ModeSwitch struct {
	Mode  string      `json:"mode"`
	From  string      `json:"from"`
	Tools int         `json:"tools"`
	Time  LatencyStat `json:"time"`
}

// LatencyStat is a latency distribution summary in milliseconds.
type LatencyStat struct {
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	Samples int     `json:"samples"`
}

// StoreScale is section 5.
type StoreScale struct {
	Tasks       int     `json:"tasks"`
	SeedSeconds float64 `json:"seed_seconds"`
	// Lists are list_tasks_kandev calls over HTTP at one client and the
	// same pages read from the store in process.
	Lists   []StoreList `json:"lists"`
	Writers int         `json:"writers"`
	Create  LoadStat    `json:"create"`
}

// StoreList is one listing shape on the big board.
type StoreList struct {
	Name  string      `json:"name"`
	Args  string      `json:"args"`
	Tool  LatencyStat `json:"tool"`  // list_tasks_kandev round trip
	Store LatencyStat `json:"store"` // Store.ListTasks in process
}

// CatalogMode is section 6 for one mode.
type CatalogMode struct {
	Mode  string `json:"mode"`
	Tools int    `json:"tools"`
	Bytes int    `json:"bytes"`
	// InputBytes and OutputBytes are the parts spent on input and output
	// schemas.
	InputBytes  int `json:"input_schema_bytes"`
	OutputBytes int `json:"output_schema_bytes"`
	// Open and Undescribed count input-schema objects that are neither
	// closed nor explicit records, and properties without a description.
	Open        int `json:"open_objects"`
	Undescribed int `json:"undescribed_properties"`
	// Largest are the mode's largest tools, largest first.
	Largest []ToolSize `json:"largest,omitempty"`
}

// ToolSize is one tool's bytes in tools/list.
type ToolSize struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// Target is one figure compared with the target.
type Target struct {
	Section string  `json:"section"`
	Name    string  `json:"name"`
	Value   float64 `json:"value"`
	Op      string  `json:"op"` // "<=" or ">="
	Limit   float64 `json:"limit"`
	Unit    string  `json:"unit"`
	Met     bool    `json:"met"`
	Note    string  `json:"note,omitempty"`
}

// WriteFile writes r as indented JSON.
func (r *Results) WriteFile(path string) error { return WriteResults(path, r) }

// ReadFile reads results written by WriteFile.
func ReadFile(path string) (*Results, error) {
	var r Results
	if err := ReadResults(path, &r, &r.FormatVersion, FormatVersion); err != nil {
		return nil, err
	}
	return &r, nil
}

// WriteResults writes v, a published results file (committed to the
// repository), as indented JSON.
func WriteResults(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil { //nolint:gosec // a published file, committed to the repository
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// ReadResults decodes the results file at path into v and checks that
// *version, v's format version once decoded, is want.
func ReadResults(path string, v any, version *int, want int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read results: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode results %s: %w", path, err)
	}
	if *version != want {
		return fmt.Errorf("results %s: format version %d, want %d", path, *version, want)
	}
	return nil
}

// BoardResult is section 7: the operator board in headless Chromium.
type BoardResult struct {
	Tasks int `json:"tasks"`
	// LoadMs is the median time from navigation to the rendered board.
	LoadMs float64 `json:"load_ms"`
	// Bytes is what the backend sent for one load (page, modules, the
	// WebSocket frames of every list), compressed as on the wire.
	Bytes int64 `json:"bytes"`
	// CardLatency is create_task_kandev over /mcp → the card on the board.
	CardLatency LatencyStat `json:"card_latency"`
}
