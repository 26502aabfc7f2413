-- `/benchgate accept REASON`: who accepted which failing rows of which head, and why; kept
-- after `/benchgate unaccept` (revoked_*) as the repository's audit trail.
CREATE TABLE acceptances (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    pr_number     INTEGER NOT NULL,
    head_sha      TEXT NOT NULL,
    accepted_by   TEXT NOT NULL,
    reason        TEXT NOT NULL,
    -- JSON array of "benchmark metric" rows that failed when it was given.
    rows          TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    revoked_at    TEXT,
    revoked_by    TEXT
);
CREATE INDEX acceptances_by_head ON acceptances (repository_id, head_sha);
