-- Honesty a user can audit: canaries on each runner, forecasts checked, a layout floor.

-- A comparison pinned to one runner (a canary) gives its jobs to that runner only.
ALTER TABLE comparisons ADD COLUMN pinned_runner_id INTEGER REFERENCES runners (id);

-- A/A sessions whose two sides were built with different layout salts, and the spread
-- between such builds (NULL until a layout calibration ran).
ALTER TABLE aa_sessions ADD COLUMN layout BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE noise_floors ADD COLUMN layout_bias REAL;
ALTER TABLE noise_floor_history ADD COLUMN layout_bias REAL;

-- What each canary's rounds said to someone who stops at the first decision.
CREATE TABLE canary_results (
    comparison_id   INTEGER NOT NULL REFERENCES comparisons (id),
    runner_id       INTEGER NOT NULL REFERENCES runners (id),
    benchmark       TEXT NOT NULL,
    metric          TEXT NOT NULL,
    planted_pct     REAL,              -- NULL for an A/A canary
    verdict         TEXT NOT NULL,     -- benchgate_api::VerdictKind, snake_case
    rounds          INTEGER NOT NULL,  -- at that verdict
    minutes         REAL,              -- from the first round's start to that verdict
    forecast_at     INTEGER,           -- the first "needs N more": at this many rounds
    forecast_rounds INTEGER,           -- and N
    recorded_at     TEXT NOT NULL,
    PRIMARY KEY (comparison_id, runner_id, benchmark, metric)
);
CREATE INDEX canary_results_by_runner ON canary_results (runner_id, recorded_at);

-- Every "needs N more rounds" a comparison said, and the rounds its verdict took.
CREATE TABLE forecasts (
    comparison_id  INTEGER NOT NULL REFERENCES comparisons (id),
    runner_id      INTEGER NOT NULL REFERENCES runners (id),
    benchmark      TEXT NOT NULL,
    metric         TEXT NOT NULL,
    at_rounds      INTEGER NOT NULL,
    needed         INTEGER NOT NULL,
    made_at        TEXT NOT NULL,
    decided_rounds INTEGER,            -- NULL while no verdict came
    decided_at     TEXT,
    PRIMARY KEY (comparison_id, runner_id, benchmark, metric, at_rounds)
);
CREATE INDEX forecasts_by_runner ON forecasts (runner_id, made_at);

-- A runner's audit flag counts the A/A canaries since it was last recalibrated by hand.
ALTER TABLE runners ADD COLUMN audit_since TEXT;
