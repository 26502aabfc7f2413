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
    WHEN COALESCE(jsonb_typeof(config -> 'layout'), 'null') <> 'null' THEN 'layout_session'
    WHEN COALESCE(jsonb_typeof(config -> 'canary'), 'null') <> 'null' THEN 'canary'
    WHEN COALESCE(jsonb_typeof(config -> 'merge_group'), 'null') <> 'null' THEN 'merge_group'
    WHEN COALESCE(jsonb_typeof(config -> 'main'), 'null') <> 'null' THEN 'plain'
    WHEN COALESCE(jsonb_typeof(config -> 'github'), 'null') <> 'null' THEN 'pull_request'
    ELSE 'plain'
END;
-- Every writer names the kind from now on.
ALTER TABLE comparisons ALTER COLUMN kind DROP DEFAULT;
CREATE INDEX comparisons_kind ON comparisons (kind, created_at);
