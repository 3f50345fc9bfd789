package bench

// validationFixture is one section-1 call: raw JSON arguments for a tool.
type validationFixture struct {
	Case  string
	Tool  string
	Args  string
	Valid bool
	// Problems is the number of problems a rejected call is built to have.
	Problems int
}

// validationFixtures are the calls the issue names: create_task_kandev with
// every field, list_tasks_kandev, show_rich_output_kandev with 4 blocks and
// a rejected create_task_kandev call with 5 problems.
var validationFixtures = []validationFixture{
	{
		Case: "create_task, all 16 fields", Tool: "create_task_kandev", Valid: true,
		Args: `{"title":"Fix the flaky store test","prompt":"Investigate the flaky TestCreateTaskConcurrentPositions and fix its cause; add a regression test.",
		  "parent_id":"self","workspace_id":"ws_0123456789","workflow_id":"wf_0123456789","workflow_step_id":"st_0123456789",
		  "agent_profile_id":"ap_claude_default","executor_profile_id":"ep_worktree_default","start_agent":true,
		  "repository_id":"repo_0123456789","local_path":"/home/dev/src/kandev","repository_url":"https://github.com/kandev/kandev.git",
		  "base_branch":"main","external_id":"ci-run-48213","blocked_by":["t_0000000001","t_0000000002"],"start_when_unblocked":true}`,
	},
	{
		Case: "list_tasks, all 6 fields", Tool: "list_tasks_kandev", Valid: true,
		Args: `{"workflow_id":"wf_0123456789","workflow_step_id":"st_0123456789","state":"IN_PROGRESS","include_archived":false,
		  "limit":50,"cursor":"WzEyLCJ0XzAwMDAwMDAwMDEiXQ"}`,
	},
	{
		Case: "show_rich_output, 4 blocks", Tool: "show_rich_output_kandev", Valid: true,
		Args: `{"version":1,"title":"Benchmark summary","description":"Throughput and latency of the gate.","blocks":[
		  {"type":"file","path":"bench/results.json","title":"Results","caption":"Raw numbers","mime_type":"application/json"},
		  {"type":"chart","chart_type":"bar","title":"Calls per second","summary":"Kandev stays within 20% of the floor.",
		   "labels":["1 client","8 clients","64 clients"],
		   "series":[{"label":"floor (calls/s)","values":[3300,11000,10800]},{"label":"kandev (calls/s)","values":[2900,null,8700]}]},
		  {"type":"metrics","items":[{"label":"p50","value":"0.31 ms","detail":"-0.02 ms"},{"label":"p99","value":"1.4 ms"},
		   {"label":"errors","value":"0"}]},
		  {"type":"chart","chart_type":"line","title":"Latency","summary":"p99 over the run.",
		   "csv":{"path":"bench/latency.csv","x_column":"second","series":[{"column":"p99_ms","label":"p99 (ms)"}]}}]}`,
	},
	{
		Case: "create_task, rejected (5 problems)", Tool: "create_task_kandev", Valid: false, Problems: 5,
		// title too long, start_agent wrong type, blocked_by item wrong type,
		// workspace_id off pattern, one unknown field.
		Args: `{"title":"This title is far too long for the board because it keeps going on and on",
		  "start_agent":"yes","blocked_by":[42],"workspace_id":"not an id!","priority":"high"}`,
	},
}
