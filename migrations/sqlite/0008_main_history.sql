-- The default branch's history: a 'step' compares a pushed commit with the last compared one
-- (several commits when pushes queued together were folded); an 'anchor' comparison compares
-- the branch now with an older commit, to find creep no single step can resolve.
ALTER TABLE comparisons ADD COLUMN branch TEXT;
ALTER TABLE comparisons ADD COLUMN main_kind TEXT CHECK (main_kind IN ('step', 'anchor'));
-- The suite key ('' for a lone [benchmark]); steps of one suite and label form one chain.
ALTER TABLE comparisons ADD COLUMN main_suite TEXT;
-- JSON array of the commits a step covers, oldest first.
ALTER TABLE comparisons ADD COLUMN main_commits TEXT;
CREATE INDEX comparisons_main ON comparisons (repository_id, branch, runner_label, id);

-- A regression found on the default branch, per benchmark and episode: opened by a step or an
-- anchor comparison, updated by later ones, closed when a comparison against a commit from
-- before it shows it gone. At most one open episode per benchmark, metric and kind.
CREATE TABLE main_regressions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    branch        TEXT NOT NULL,
    runner_label  TEXT NOT NULL,
    main_suite    TEXT NOT NULL,
    benchmark     TEXT NOT NULL,
    metric        TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('step', 'creep')),
    state         TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    -- The comparison that found it, with its commits: before the regression, and after it.
    opened_by     INTEGER NOT NULL REFERENCES comparisons (id),
    base_sha      TEXT NOT NULL,
    head_sha      TEXT NOT NULL,
    -- The change it found (ratio − 1) and its interval, as the comparison stated them.
    change        REAL NOT NULL,
    change_lower  REAL NOT NULL,
    change_upper  REAL NOT NULL,
    last_seen_by  INTEGER NOT NULL REFERENCES comparisons (id),
    closed_by     INTEGER REFERENCES comparisons (id),
    issue_number  INTEGER,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX main_regressions_one_open ON main_regressions
    (repository_id, branch, runner_label, main_suite, benchmark, metric, kind) WHERE state = 'open';

-- One active anchor comparison per series and pair of commits: two replicas scheduling the same
-- one at once get one comparison, and the second insert is refused.
CREATE UNIQUE INDEX comparisons_one_active_anchor ON comparisons
    (repository_id, branch, runner_label, main_suite, base_sha, head_sha)
    WHERE main_kind = 'anchor' AND state IN ('queued', 'running');
