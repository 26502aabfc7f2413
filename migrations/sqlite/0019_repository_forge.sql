-- Which forge a repository lives on: `github` (every row before GitLab was wired) or `gitlab`,
-- whose rows are named `host/group/project` so they never meet a GitHub `owner/name`.
ALTER TABLE repositories ADD COLUMN forge TEXT NOT NULL DEFAULT 'github';
