-- Which way is better for a sample's metric, as its parser said: a throughput that drops is a
-- regression. Earlier samples were all treated as lower-is-better.
ALTER TABLE samples ADD COLUMN direction TEXT NOT NULL DEFAULT 'lower_is_better'
    CHECK (direction IN ('lower_is_better', 'higher_is_better'));
