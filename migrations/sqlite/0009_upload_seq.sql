-- Which upload of its job wrote each sample. A job's uploads are serialized by its row lock
-- (the lease fence), so a reader that has seen upload k of a job has seen every earlier one,
-- and re-analysis after an upload reads only that job's new samples.
ALTER TABLE jobs ADD COLUMN uploads BIGINT NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN upload_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX samples_by_upload ON samples (job_id, upload_seq);
