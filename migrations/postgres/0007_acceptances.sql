-- `/benchgate accept REASON`: who accepted which failing rows of which head, and why; kept
-- after `/benchgate unaccept` (revoked_*) as the repository's audit trail.
CREATE TABLE acceptances (
    id            BIGSERIAL PRIMARY KEY,
    repository_id BIGINT NOT NULL REFERENCES repositories (id),
    pr_number     BIGINT NOT NULL,
    head_sha      TEXT NOT NULL,
    accepted_by   TEXT NOT NULL,
    reason        TEXT NOT NULL,
    -- JSON array of "benchmark metric" rows that failed when it was given.
    rows          JSONB NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    revoked_at    TIMESTAMPTZ,
    revoked_by    TEXT
);
CREATE INDEX acceptances_by_head ON acceptances (repository_id, head_sha);
