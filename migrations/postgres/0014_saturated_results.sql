-- Results stored before e-values saturated at 1e300 hold f64::MAX, which jsonb gives back as
-- 309 digits that the reader refuses: such rows were skipped as unreadable ("no results yet").
UPDATE comparison_results
SET result = jsonb_set(result, '{e_value}', '1e300'::jsonb)
WHERE jsonb_typeof(result -> 'e_value') = 'number' AND (result ->> 'e_value')::numeric > 1e300;

UPDATE comparison_results
SET result = jsonb_set(result, '{margin_pct}', '1e300'::jsonb)
WHERE jsonb_typeof(result -> 'margin_pct') = 'number' AND (result ->> 'margin_pct')::numeric > 1e300;
