-- A reached quorum moves its task once per visit of the step, however
-- many backends count decisions at the same moment: the decision that
-- resolves it first sets tasks.quorum_visit to the task's
-- step_entered_at (a compare-and-set), and only that one moves the task.
ALTER TABLE tasks ADD COLUMN quorum_visit TEXT;
