-- How often a floor's A/A runs ran in a slow mode (`benchgate_stats::modes`), beside the floor
-- on the runner page: slow runs and runs over the A/A sessions long enough to tell (6 runs a
-- side), how many such sessions, and the median excess of the slow runs (log scale, on the
-- "worse" side). Floors computed before have none until the next A/A session recomputes them.
ALTER TABLE noise_floors ADD COLUMN mode_slow_runs BIGINT;
ALTER TABLE noise_floors ADD COLUMN mode_runs BIGINT;
ALTER TABLE noise_floors ADD COLUMN mode_sessions BIGINT;
ALTER TABLE noise_floors ADD COLUMN mode_excess DOUBLE PRECISION;
ALTER TABLE noise_floor_history ADD COLUMN mode_slow_runs BIGINT;
ALTER TABLE noise_floor_history ADD COLUMN mode_runs BIGINT;
ALTER TABLE noise_floor_history ADD COLUMN mode_sessions BIGINT;
ALTER TABLE noise_floor_history ADD COLUMN mode_excess DOUBLE PRECISION;
