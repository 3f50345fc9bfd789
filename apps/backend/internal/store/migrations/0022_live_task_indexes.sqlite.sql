-- Nothing on SQLite: its planner walks the scope indexes of 0001 for
-- live-task listings (EXPLAIN QUERY PLAN in TestListingPlans), so extra
-- partial indexes would only cost writes (see 0022_live_task_indexes.postgres.sql).
SELECT 1;
