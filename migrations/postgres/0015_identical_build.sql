-- A job whose sides built to byte-identical `artifacts` ran no round: what was compared (the
-- files and one digest over them), for the report's "identical build".
ALTER TABLE jobs ADD COLUMN identical_build JSONB;
