-- Profiled runs after a verdict: a job with `profile` set runs both sides under a sampling
-- profiler and uploads folded stacks, never samples; the comparison's state ignores it.
ALTER TABLE jobs ADD COLUMN profile JSONB;

-- What a profile job uploaded: one row per job, the newest attempt's.
CREATE TABLE profiles (
    id            BIGSERIAL PRIMARY KEY,
    job_id        BIGINT NOT NULL UNIQUE REFERENCES jobs (id),
    comparison_id BIGINT NOT NULL REFERENCES comparisons (id),
    runner_id     BIGINT NOT NULL REFERENCES runners (id),
    event         TEXT,          -- the sampled event; NULL when no profiler could run
    unavailable   TEXT,          -- why not, one line
    runs          BIGINT NOT NULL,
    base_folded   TEXT NOT NULL, -- inferno's folded stacks, capped by the agent
    head_folded   TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX profiles_by_comparison ON profiles (comparison_id);
