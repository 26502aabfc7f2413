-- What asked for a job (e.g. the outbox row of a `/rebench`), so a request carried out twice
-- (a retry after a lost answer, a second replica) adds its rounds once.
ALTER TABLE jobs ADD COLUMN origin TEXT;
CREATE UNIQUE INDEX jobs_by_origin ON jobs (origin) WHERE origin IS NOT NULL;
