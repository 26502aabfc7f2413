-- The layout spread's 95% interval beside its point (`layout_bias`): M widens by the lower
-- end. Floors computed before have none, so they carry no layout band until the next layout
-- calibration recomputes them (from at least 8 salted builds).
ALTER TABLE noise_floors ADD COLUMN layout_lower DOUBLE PRECISION;
ALTER TABLE noise_floors ADD COLUMN layout_upper DOUBLE PRECISION;
ALTER TABLE noise_floor_history ADD COLUMN layout_lower DOUBLE PRECISION;
ALTER TABLE noise_floor_history ADD COLUMN layout_upper DOUBLE PRECISION;
