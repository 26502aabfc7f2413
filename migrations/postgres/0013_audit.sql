-- Honesty a user can audit: canaries on each runner, forecasts checked, a layout floor.

-- A comparison pinned to one runner (a canary) gives its jobs to that runner only.
ALTER TABLE comparisons ADD COLUMN pinned_runner_id BIGINT REFERENCES runners (id);

-- A/A sessions whose two sides were built with different layout salts, and the spread
-- between such builds (NULL until a layout calibration ran).
ALTER TABLE aa_sessions ADD COLUMN layout BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE noise_floors ADD COLUMN layout_bias DOUBLE PRECISION;
ALTER TABLE noise_floor_history ADD COLUMN layout_bias DOUBLE PRECISION;

-- What each canary's rounds said to someone who stops at the first decision.
CREATE TABLE canary_results (
    comparison_id   BIGINT NOT NULL REFERENCES comparisons (id),
    runner_id       BIGINT NOT NULL REFERENCES runners (id),
    benchmark       TEXT NOT NULL,
    metric          TEXT NOT NULL,
    planted_pct     DOUBLE PRECISION,              -- NULL for an A/A canary
    verdict         TEXT NOT NULL,     -- benchgate_api::VerdictKind, snake_case
    rounds          BIGINT NOT NULL,  -- at that verdict
    minutes         DOUBLE PRECISION,              -- from the first round's start to that verdict
    forecast_at     BIGINT,           -- the first "needs N more": at this many rounds
    forecast_rounds BIGINT,           -- and N
    recorded_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (comparison_id, runner_id, benchmark, metric)
);
CREATE INDEX canary_results_by_runner ON canary_results (runner_id, recorded_at);

-- Every "needs N more rounds" a comparison said, and the rounds its verdict took.
CREATE TABLE forecasts (
    comparison_id  BIGINT NOT NULL REFERENCES comparisons (id),
    runner_id      BIGINT NOT NULL REFERENCES runners (id),
    benchmark      TEXT NOT NULL,
    metric         TEXT NOT NULL,
    at_rounds      BIGINT NOT NULL,
    needed         BIGINT NOT NULL,
    made_at        TIMESTAMPTZ NOT NULL,
    decided_rounds BIGINT,            -- NULL while no verdict came
    decided_at     TIMESTAMPTZ,
    PRIMARY KEY (comparison_id, runner_id, benchmark, metric, at_rounds)
);
CREATE INDEX forecasts_by_runner ON forecasts (runner_id, made_at);

-- A runner's audit flag counts the A/A canaries since it was last recalibrated by hand.
ALTER TABLE runners ADD COLUMN audit_since TIMESTAMPTZ;
