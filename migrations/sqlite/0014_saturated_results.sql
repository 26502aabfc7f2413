-- The Postgres migration of this number rewrites results holding f64::MAX, which jsonb gives
-- back in a form the reader refuses; SQLite keeps the JSON text as written, which reads back.
SELECT 1;
