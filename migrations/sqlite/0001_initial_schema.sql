-- The whole benchgate schema. Later migrations add columns, not concepts.
-- The SQLite dialect of migrations/postgres/0001_initial_schema.sql: timestamps are RFC 3339 TEXT
-- written by the store (UTC, so they sort as text), JSON is TEXT.

-- A GitHub App installation (an account that installed the app).
CREATE TABLE installations (
    id            INTEGER PRIMARY KEY,          -- GitHub's installation id
    account_login TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    removed_at    TEXT
);

-- A repository benchgate benchmarks: from GitHub (github_id set) or a URL/path given by an admin.
CREATE TABLE repositories (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    github_id       INTEGER UNIQUE,
    installation_id INTEGER REFERENCES installations (id),
    full_name       TEXT NOT NULL UNIQUE,      -- owner/name, or the URL/path for local ones
    clone_url       TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    removed_at      TEXT
);

-- A benchmark machine; its agent authenticates with a token whose SHA-256 is kept here.
CREATE TABLE runners (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    labels       TEXT NOT NULL,               -- JSON array of label strings
    token_hash   TEXT NOT NULL UNIQUE,         -- hex SHA-256 of the token
    fingerprint  TEXT,                        -- CPU, cores, kernel, governor… as the agent reports
    created_at   TEXT NOT NULL,
    last_seen_at TEXT,
    revoked_at   TEXT
);

-- One A/B question: is head faster or slower than base on this repository?
CREATE TABLE comparisons (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    repository_id  INTEGER NOT NULL REFERENCES repositories (id),
    pr_number      INTEGER,
    base_sha       TEXT NOT NULL,
    head_sha       TEXT NOT NULL,
    runner_label   TEXT NOT NULL,
    config         TEXT NOT NULL,             -- snapshot of .benchgate.toml as parsed
    planned_rounds INTEGER,                     -- n*, planned from the A/A floor before any A/B data
    state          TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'superseded', 'cancelled')),
    check_run_id   INTEGER,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX comparisons_by_pr ON comparisons (repository_id, pr_number, created_at);
CREATE INDEX comparisons_recent ON comparisons (created_at);

-- The one PR comment per (repository, PR, runner label), edited in place across pushes.
CREATE TABLE pull_request_comments (
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    pr_number     INTEGER NOT NULL,
    runner_label  TEXT NOT NULL,
    comment_id    INTEGER NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (repository_id, pr_number, runner_label)
);

-- A unit of work for one runner: rounds of a comparison, or an A/A calibration session.
CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    kind             TEXT NOT NULL CHECK (kind IN ('comparison', 'calibration')),
    comparison_id    INTEGER REFERENCES comparisons (id),
    repository_id    INTEGER NOT NULL REFERENCES repositories (id),
    base_sha         TEXT NOT NULL,
    head_sha         TEXT NOT NULL,            -- equal to base_sha for calibration
    config           TEXT NOT NULL,
    runner_label     TEXT NOT NULL,
    pinned_runner_id INTEGER REFERENCES runners (id), -- calibration measures one particular runner
    rounds           INTEGER NOT NULL,
    priority         INTEGER NOT NULL,          -- higher first: interactive (/rebench) ahead
    state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    cancel_requested INTEGER NOT NULL DEFAULT 0, -- a running job learns it at its heartbeat
    lease_token      TEXT,
    lease_expires_at TEXT,
    claimed_by       INTEGER REFERENCES runners (id),
    attempts         INTEGER NOT NULL DEFAULT 0, -- claims so far; the current attempt's number
    max_attempts     INTEGER NOT NULL,
    last_error       TEXT,
    log_tail         TEXT,
    created_at       TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    updated_at       TEXT NOT NULL,
    CHECK ((kind = 'comparison') = (comparison_id IS NOT NULL))
);
CREATE INDEX jobs_claimable ON jobs (runner_label, priority DESC, created_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_by_comparison ON jobs (comparison_id);
CREATE INDEX jobs_calibrations ON jobs (pinned_runner_id, repository_id, created_at) WHERE kind = 'calibration';

-- One measured value. Keyed by attempt and runner so series of two machines never mix.
CREATE TABLE samples (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      INTEGER NOT NULL REFERENCES jobs (id),
    attempt     INTEGER NOT NULL,
    runner_id   INTEGER NOT NULL REFERENCES runners (id),
    round       INTEGER NOT NULL,
    side        TEXT NOT NULL CHECK (side IN ('base', 'head')),
    position    INTEGER NOT NULL,               -- 0 when this side ran first in its round
    benchmark   TEXT NOT NULL,
    metric      TEXT NOT NULL,
    unit        TEXT NOT NULL,
    value       REAL NOT NULL,
    lower       REAL,
    upper       REAL,
    recorded_at TEXT NOT NULL,
    UNIQUE (job_id, attempt, round, side, benchmark, metric)
);
CREATE INDEX samples_by_runner ON samples (runner_id, job_id);

-- Per-benchmark results as computed after an upload, stored so pages never recompute them.
CREATE TABLE comparison_results (
    comparison_id INTEGER NOT NULL REFERENCES comparisons (id),
    runner_id     INTEGER NOT NULL REFERENCES runners (id),
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    result        TEXT NOT NULL,              -- benchgate_api::BenchmarkResult
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (comparison_id, runner_id, benchmark, metric)
);

-- Summary of one A/A session (one calibration job) for one benchmark and metric.
CREATE TABLE aa_sessions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id        INTEGER REFERENCES jobs (id),
    runner_id     INTEGER NOT NULL REFERENCES runners (id),
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    pairs         INTEGER NOT NULL,
    mean          REAL NOT NULL,   -- mean of ln(head/base) over the pairs
    spread        REAL NOT NULL,   -- sd of ln(head/base) over the pairs
    recorded_at   TEXT NOT NULL,
    UNIQUE (job_id, benchmark, metric)
);
CREATE INDEX aa_sessions_by_floor ON aa_sessions (runner_id, repository_id, benchmark, metric, recorded_at);

-- The current A/A noise floor of each (runner, repository, benchmark, metric).
CREATE TABLE noise_floors (
    runner_id      INTEGER NOT NULL REFERENCES runners (id),
    repository_id  INTEGER NOT NULL REFERENCES repositories (id),
    benchmark      TEXT NOT NULL,
    metric         TEXT NOT NULL,
    pairs          INTEGER NOT NULL,
    sessions       INTEGER NOT NULL,
    within_spread  REAL NOT NULL,  -- s_aa
    between_bias   REAL NOT NULL,  -- tau_b
    computed_at    TEXT NOT NULL,
    PRIMARY KEY (runner_id, repository_id, benchmark, metric)
);

-- Every floor ever computed, for the dashboard's floor-over-time plot.
CREATE TABLE noise_floor_history (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    runner_id      INTEGER NOT NULL REFERENCES runners (id),
    repository_id  INTEGER NOT NULL REFERENCES repositories (id),
    benchmark      TEXT NOT NULL,
    metric         TEXT NOT NULL,
    pairs          INTEGER NOT NULL,
    sessions       INTEGER NOT NULL,
    within_spread  REAL NOT NULL,
    between_bias   REAL NOT NULL,
    computed_at    TEXT NOT NULL
);
CREATE INDEX noise_floor_history_by_floor ON noise_floor_history (runner_id, repository_id, benchmark, metric, computed_at);

-- Every webhook delivery seen, so a redelivery does nothing twice.
CREATE TABLE webhook_deliveries (
    delivery_id TEXT PRIMARY KEY,              -- X-GitHub-Delivery
    event       TEXT NOT NULL,
    action      TEXT,
    received_at TEXT NOT NULL,
    outcome     TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_received ON webhook_deliveries (received_at);

-- Every GitHub write, recorded first and delivered by a worker with retries.
CREATE TABLE outbox (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    kind             TEXT NOT NULL,
    dedupe_key       TEXT,                     -- a newer pending row with this key replaces the payload
    payload          TEXT NOT NULL,
    revision         INTEGER NOT NULL DEFAULT 0, -- bumped when the payload is replaced
    claimed_revision INTEGER,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    lease_token      TEXT,
    lease_expires_at TEXT,
    done_at          TEXT,
    last_error       TEXT,
    created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX outbox_pending_key ON outbox (dedupe_key) WHERE done_at IS NULL;
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE done_at IS NULL;
