//! The statistics engine's integration tests, built as one test binary: each file beside this one
//! is a module. Run one file's tests with `cargo test -p benchgate-stats --test integration walsh::`.

mod canary_family;
mod issue_numbers;
mod noise_floor_fixture;
mod normal;
mod properties;
mod tolerance;
mod unequal_spreads;
mod verdict_table;
mod walsh;
mod warnings;
