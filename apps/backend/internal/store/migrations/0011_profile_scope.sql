-- Agent and executor profiles gain a workspace scope: NULL is a global
-- profile (the operator's; every profile written before this migration),
-- else the workspace whose config-mode session created it. A profile of a
-- workspace is listed, changed and used only there (kanban.ProfileVisible,
-- CheckProfileWrite, CheckProfileUse); it is never an agent's or an
-- executor's default. Names stay unique per agent and per executor across
-- every scope (the UNIQUE constraints of 0001).
ALTER TABLE agent_profiles ADD COLUMN workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE;
ALTER TABLE executor_profiles ADD COLUMN workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE;
CREATE INDEX idx_agent_profiles_workspace ON agent_profiles (workspace_id);
CREATE INDEX idx_executor_profiles_workspace ON executor_profiles (workspace_id);
