-- The newest head GitHub announced for each PR, written with its webhook: a schedule of an older
-- head that outlived its lease cannot supersede it, and a fork approval covers only heads that
-- arrived before the maintainer's comment.
CREATE TABLE pull_request_heads (
    repository_id BIGINT NOT NULL REFERENCES repositories (id),
    pr_number     BIGINT NOT NULL,
    head_sha      TEXT NOT NULL,
    received_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (repository_id, pr_number)
);

-- GitHub never moves a completed check run back: rounds added after the run completed
-- (a re-run, /rebench, a fork approval) are reported on a new run of the next generation.
ALTER TABLE comparisons ADD COLUMN rounds_generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE comparisons ADD COLUMN check_run_generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE comparisons ADD COLUMN check_run_completed BOOLEAN NOT NULL DEFAULT FALSE;
