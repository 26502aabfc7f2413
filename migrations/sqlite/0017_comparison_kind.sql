-- A comparison's kind, decided when it is created and stored, instead of inferred from which
-- optional context its config carries. Existing rows get the kind that inference gave: a
-- history step or anchor by its `main_kind`, else the first context set of layout, canary,
-- merge group, history settings (a probe: plain), pull request.
ALTER TABLE comparisons ADD COLUMN kind TEXT NOT NULL DEFAULT 'plain'
    CHECK (kind IN ('pull_request', 'merge_group', 'main_step', 'main_anchor', 'canary',
                    'layout_session', 'plain'));
UPDATE comparisons SET kind = CASE
    WHEN branch IS NOT NULL AND main_kind = 'step' THEN 'main_step'
    WHEN branch IS NOT NULL AND main_kind = 'anchor' THEN 'main_anchor'
    WHEN json_extract(config, '$.layout') IS NOT NULL THEN 'layout_session'
    WHEN json_extract(config, '$.canary') IS NOT NULL THEN 'canary'
    WHEN json_extract(config, '$.merge_group') IS NOT NULL THEN 'merge_group'
    WHEN json_extract(config, '$.main') IS NOT NULL THEN 'plain'
    WHEN json_extract(config, '$.github') IS NOT NULL THEN 'pull_request'
    ELSE 'plain'
END;
CREATE INDEX comparisons_kind ON comparisons (kind, created_at);
