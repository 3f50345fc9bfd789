-- Task positions become sparse sort keys: tasks.position orders a step's
-- tasks (unique within the step, 1<<20 apart when renumbered) and the
-- 0-based position clients see is a task's rank in its step. A move
-- writes one key between its neighbours' instead of renumbering the step.
-- task_blocks counts a step's tasks per block of keys (position >> 30),
-- kept by triggers, so that a rank is the blocks before the task's plus
-- the task's place within its block: no count over the whole step.
UPDATE tasks SET position = r.rn << 20
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY workflow_step_id ORDER BY position, id) AS rn FROM tasks) AS r
WHERE r.id = tasks.id;

CREATE TABLE task_blocks (
    step_id TEXT NOT NULL REFERENCES workflow_steps (id) ON DELETE CASCADE,
    block   INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (step_id, block)
) WITHOUT ROWID;
INSERT INTO task_blocks (step_id, block, n)
SELECT workflow_step_id, position >> 30, COUNT(*) FROM tasks GROUP BY workflow_step_id, position >> 30;

CREATE TRIGGER tasks_blocks_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_blocks (step_id, block, n) VALUES (NEW.workflow_step_id, NEW.position >> 30, 1)
    ON CONFLICT (step_id, block) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER tasks_blocks_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_blocks SET n = n - 1 WHERE step_id = OLD.workflow_step_id AND block = OLD.position >> 30;
END;

CREATE TRIGGER tasks_blocks_update AFTER UPDATE OF workflow_step_id, position ON tasks
WHEN OLD.workflow_step_id <> NEW.workflow_step_id OR (OLD.position >> 30) <> (NEW.position >> 30) BEGIN
    UPDATE task_blocks SET n = n - 1 WHERE step_id = OLD.workflow_step_id AND block = OLD.position >> 30;
    INSERT INTO task_blocks (step_id, block, n) VALUES (NEW.workflow_step_id, NEW.position >> 30, 1)
    ON CONFLICT (step_id, block) DO UPDATE SET n = n + 1;
END;
