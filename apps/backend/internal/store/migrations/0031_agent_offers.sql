-- What each agent type's last ACP session offered (models and modes, as
-- JSON arrays bounded by kanban.MaxAgentOffered), so that the board
-- offers them after a restart, before the agent's next session.
CREATE TABLE agent_offers (
    agent      TEXT PRIMARY KEY,
    models     TEXT NOT NULL,
    modes      TEXT NOT NULL,
    offered_at TEXT NOT NULL
);
