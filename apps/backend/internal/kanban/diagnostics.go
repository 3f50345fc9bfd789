package kanban

// StoreReport describes a store for a diagnostic bundle: its engine, its
// schema and how much it holds. It carries counts only, never content.
type StoreReport struct {
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	// SchemaVersion is the newest migration applied; SchemaLatest the
	// newest this binary knows.
	SchemaVersion int               `json:"schema_version"`
	SchemaLatest  int               `json:"schema_latest"`
	Migrations    []MigrationRecord `json:"migrations"`
	Counts        StoreCounts       `json:"counts"`
}

// MigrationRecord is one applied schema migration.
type MigrationRecord struct {
	Version   int    `json:"version"`
	Name      string `json:"name"`
	AppliedAt string `json:"applied_at"`
}

// StoreCounts are the numbers of rows a store holds, by kind and state.
type StoreCounts struct {
	Workspaces         int            `json:"workspaces"`
	Workflows          int            `json:"workflows"`
	Tasks              int            `json:"tasks"`
	TasksArchived      int            `json:"tasks_archived"`
	TasksByState       map[string]int `json:"tasks_by_state"`
	Sessions           int            `json:"sessions"`
	SessionsByState    map[string]int `json:"sessions_by_state"`
	SessionsAttached   int            `json:"sessions_attached"`
	QuestionsByState   map[string]int `json:"questions_by_state"`
	PermissionsByState map[string]int `json:"permissions_by_state"`
	Repositories       int            `json:"repositories"`
	Worktrees          int            `json:"worktrees"`
	AgentProfiles      int            `json:"agent_profiles"`
	ExecutorProfiles   int            `json:"executor_profiles"`
}
