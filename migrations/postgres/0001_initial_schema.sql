-- The whole benchgate schema. Later migrations add columns, not concepts.
-- migrations/sqlite/0001_initial_schema.sql is the same schema in SQLite's dialect.

-- A GitHub App installation (an account that installed the app).
CREATE TABLE installations (
    id            BIGINT PRIMARY KEY,          -- GitHub's installation id
    account_login TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    removed_at    TIMESTAMPTZ
);

-- A repository benchgate benchmarks: from GitHub (github_id set) or a URL/path given by an admin.
CREATE TABLE repositories (
    id              BIGSERIAL PRIMARY KEY,
    github_id       BIGINT UNIQUE,
    installation_id BIGINT REFERENCES installations (id),
    full_name       TEXT NOT NULL UNIQUE,      -- owner/name, or the URL/path for local ones
    clone_url       TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    removed_at      TIMESTAMPTZ
);

-- A benchmark machine; its agent authenticates with a token whose SHA-256 is kept here.
CREATE TABLE runners (
    id           BIGSERIAL PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    labels       JSONB NOT NULL,               -- JSON array of label strings
    token_hash   TEXT NOT NULL UNIQUE,         -- hex SHA-256 of the token
    fingerprint  JSONB,                        -- CPU, cores, kernel, governor… as the agent reports
    created_at   TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);

-- One A/B question: is head faster or slower than base on this repository?
CREATE TABLE comparisons (
    id             BIGSERIAL PRIMARY KEY,
    repository_id  BIGINT NOT NULL REFERENCES repositories (id),
    pr_number      BIGINT,
    base_sha       TEXT NOT NULL,
    head_sha       TEXT NOT NULL,
    runner_label   TEXT NOT NULL,
    config         JSONB NOT NULL,             -- snapshot of .benchgate.toml as parsed
    planned_rounds BIGINT,                     -- n*, planned from the A/A floor before any A/B data
    state          TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'superseded', 'cancelled')),
    check_run_id   BIGINT,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX comparisons_by_pr ON comparisons (repository_id, pr_number, created_at);
CREATE INDEX comparisons_recent ON comparisons (created_at);

-- The one PR comment per (repository, PR, runner label), edited in place across pushes.
CREATE TABLE pull_request_comments (
    repository_id BIGINT NOT NULL REFERENCES repositories (id),
    pr_number     BIGINT NOT NULL,
    runner_label  TEXT NOT NULL,
    comment_id    BIGINT NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (repository_id, pr_number, runner_label)
);

-- A unit of work for one runner: rounds of a comparison, or an A/A calibration session.
CREATE TABLE jobs (
    id               BIGSERIAL PRIMARY KEY,
    kind             TEXT NOT NULL CHECK (kind IN ('comparison', 'calibration')),
    comparison_id    BIGINT REFERENCES comparisons (id),
    repository_id    BIGINT NOT NULL REFERENCES repositories (id),
    base_sha         TEXT NOT NULL,
    head_sha         TEXT NOT NULL,            -- equal to base_sha for calibration
    config           JSONB NOT NULL,
    runner_label     TEXT NOT NULL,
    pinned_runner_id BIGINT REFERENCES runners (id), -- calibration measures one particular runner
    rounds           BIGINT NOT NULL,
    priority         BIGINT NOT NULL,          -- higher first: interactive (/rebench) ahead
    state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE, -- a running job learns it at its heartbeat
    lease_token      TEXT,
    lease_expires_at TIMESTAMPTZ,
    claimed_by       BIGINT REFERENCES runners (id),
    attempts         BIGINT NOT NULL DEFAULT 0, -- claims so far; the current attempt's number
    max_attempts     BIGINT NOT NULL,
    last_error       TEXT,
    log_tail         TEXT,
    created_at       TIMESTAMPTZ NOT NULL,
    started_at       TIMESTAMPTZ,
    finished_at      TIMESTAMPTZ,
    updated_at       TIMESTAMPTZ NOT NULL,
    CHECK ((kind = 'comparison') = (comparison_id IS NOT NULL))
);
CREATE INDEX jobs_claimable ON jobs (runner_label, priority DESC, created_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_by_comparison ON jobs (comparison_id);
CREATE INDEX jobs_calibrations ON jobs (pinned_runner_id, repository_id, created_at) WHERE kind = 'calibration';

-- One measured value. Keyed by attempt and runner so series of two machines never mix.
CREATE TABLE samples (
    id          BIGSERIAL PRIMARY KEY,
    job_id      BIGINT NOT NULL REFERENCES jobs (id),
    attempt     BIGINT NOT NULL,
    runner_id   BIGINT NOT NULL REFERENCES runners (id),
    round       BIGINT NOT NULL,
    side        TEXT NOT NULL CHECK (side IN ('base', 'head')),
    position    BIGINT NOT NULL,               -- 0 when this side ran first in its round
    benchmark   TEXT NOT NULL,
    metric      TEXT NOT NULL,
    unit        TEXT NOT NULL,
    value       DOUBLE PRECISION NOT NULL,
    lower       DOUBLE PRECISION,
    upper       DOUBLE PRECISION,
    recorded_at TIMESTAMPTZ NOT NULL,
    UNIQUE (job_id, attempt, round, side, benchmark, metric)
);
CREATE INDEX samples_by_runner ON samples (runner_id, job_id);

-- Per-benchmark results as computed after an upload, stored so pages never recompute them.
CREATE TABLE comparison_results (
    comparison_id BIGINT NOT NULL REFERENCES comparisons (id),
    runner_id     BIGINT NOT NULL REFERENCES runners (id),
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    result        JSONB NOT NULL,              -- benchgate_api::BenchmarkResult
    updated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (comparison_id, runner_id, benchmark, metric)
);

-- Summary of one A/A session (one calibration job) for one benchmark and metric.
CREATE TABLE aa_sessions (
    id            BIGSERIAL PRIMARY KEY,
    job_id        BIGINT REFERENCES jobs (id),
    runner_id     BIGINT NOT NULL REFERENCES runners (id),
    repository_id BIGINT NOT NULL REFERENCES repositories (id),
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    pairs         BIGINT NOT NULL,
    mean          DOUBLE PRECISION NOT NULL,   -- mean of ln(head/base) over the pairs
    spread        DOUBLE PRECISION NOT NULL,   -- sd of ln(head/base) over the pairs
    recorded_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (job_id, benchmark, metric)
);
CREATE INDEX aa_sessions_by_floor ON aa_sessions (runner_id, repository_id, benchmark, metric, recorded_at);

-- The current A/A noise floor of each (runner, repository, benchmark, metric).
CREATE TABLE noise_floors (
    runner_id      BIGINT NOT NULL REFERENCES runners (id),
    repository_id  BIGINT NOT NULL REFERENCES repositories (id),
    benchmark      TEXT NOT NULL,
    metric         TEXT NOT NULL,
    pairs          BIGINT NOT NULL,
    sessions       BIGINT NOT NULL,
    within_spread  DOUBLE PRECISION NOT NULL,  -- s_aa
    between_bias   DOUBLE PRECISION NOT NULL,  -- tau_b
    computed_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (runner_id, repository_id, benchmark, metric)
);

-- Every floor ever computed, for the dashboard's floor-over-time plot.
CREATE TABLE noise_floor_history (
    id             BIGSERIAL PRIMARY KEY,
    runner_id      BIGINT NOT NULL REFERENCES runners (id),
    repository_id  BIGINT NOT NULL REFERENCES repositories (id),
    benchmark      TEXT NOT NULL,
    metric         TEXT NOT NULL,
    pairs          BIGINT NOT NULL,
    sessions       BIGINT NOT NULL,
    within_spread  DOUBLE PRECISION NOT NULL,
    between_bias   DOUBLE PRECISION NOT NULL,
    computed_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX noise_floor_history_by_floor ON noise_floor_history (runner_id, repository_id, benchmark, metric, computed_at);

-- Every webhook delivery seen, so a redelivery does nothing twice.
CREATE TABLE webhook_deliveries (
    delivery_id TEXT PRIMARY KEY,              -- X-GitHub-Delivery
    event       TEXT NOT NULL,
    action      TEXT,
    received_at TIMESTAMPTZ NOT NULL,
    outcome     TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_received ON webhook_deliveries (received_at);

-- Every GitHub write, recorded first and delivered by a worker with retries.
CREATE TABLE outbox (
    id               BIGSERIAL PRIMARY KEY,
    kind             TEXT NOT NULL,
    dedupe_key       TEXT,                     -- a newer pending row with this key replaces the payload
    payload          JSONB NOT NULL,
    revision         BIGINT NOT NULL DEFAULT 0, -- bumped when the payload is replaced
    claimed_revision BIGINT,
    attempts         BIGINT NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ NOT NULL,
    lease_token      TEXT,
    lease_expires_at TIMESTAMPTZ,
    done_at          TIMESTAMPTZ,
    last_error       TEXT,
    created_at       TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX outbox_pending_key ON outbox (dedupe_key) WHERE done_at IS NULL;
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE done_at IS NULL;
