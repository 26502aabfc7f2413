-- How many samples each runner's stored result set was computed from. Analyses run on any
-- replica at once; one that saw fewer samples (an older view) never overwrites a newer set.
CREATE TABLE comparison_result_sets (
    comparison_id BIGINT NOT NULL REFERENCES comparisons (id),
    runner_id     BIGINT NOT NULL REFERENCES runners (id),
    basis         BIGINT NOT NULL,
    PRIMARY KEY (comparison_id, runner_id)
);
