-- Culprit searches on the default branch: an episode's range (good → bad, first-parent) bisected
-- by probe comparisons, each stopped as soon as its anytime-valid interval answers.
CREATE TABLE bisections (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    branch        TEXT NOT NULL,
    runner_label  TEXT NOT NULL,
    main_suite    TEXT NOT NULL,
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    -- The episode it explains; NULL when asked for by hand without one.
    regression_id INTEGER REFERENCES main_regressions (id),
    -- A merge group's comparison whose workload and priority the probes take; NULL for the
    -- default branch (the series' newest step's).
    source_comparison INTEGER REFERENCES comparisons (id),
    good_sha      TEXT NOT NULL,
    bad_sha       TEXT NOT NULL,
    -- JSON: the range read from GitHub, good first, bad last; NULL until read.
    commits       TEXT,
    state         TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    -- JSON: how it ended (culprit, spread, undecided, skipped, no regression) or why it failed.
    outcome       TEXT,
    requested_by  TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX bisections_one_running ON bisections
    (repository_id, branch, runner_label, main_suite, benchmark, metric, good_sha, bad_sha)
    WHERE state = 'running';
CREATE INDEX bisections_by_repository ON bisections (repository_id, id);

-- The probes of a search, in order: commit `newer` against `older`, its interval (log scale,
-- regression positive) and rounds once it ended. Ended probes are replayed, never re-measured.
CREATE TABLE bisection_probes (
    bisection_id INTEGER NOT NULL REFERENCES bisections (id),
    seq          INTEGER NOT NULL,
    older_sha    TEXT NOT NULL,
    newer_sha    TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'decided', 'limit', 'skipped')),
    lower        REAL,
    upper        REAL,
    rounds       INTEGER NOT NULL DEFAULT 0,
    -- JSON array of the comparisons whose pairs it used.
    comparisons  TEXT NOT NULL DEFAULT '[]',
    note         TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (bisection_id, seq)
);

-- Comparisons a search waits on: when one ends, the store asks for the search's next step in
-- the same transaction.
CREATE TABLE bisection_comparisons (
    bisection_id  INTEGER NOT NULL REFERENCES bisections (id),
    comparison_id INTEGER NOT NULL REFERENCES comparisons (id),
    PRIMARY KEY (bisection_id, comparison_id)
);
CREATE INDEX bisection_comparisons_by_comparison ON bisection_comparisons (comparison_id);
