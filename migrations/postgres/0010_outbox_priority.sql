-- Due rows are claimed by priority (higher first), then due time: each outbox task declares its
-- priority, so the default branch's history never delays a pull request's check.
ALTER TABLE outbox ADD COLUMN priority BIGINT NOT NULL DEFAULT 0;
