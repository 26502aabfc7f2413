//! The harness's integration tests, built as one test binary: each file beside this one is a
//! module. Run one file's tests with `cargo test -p benchgate-harness --test integration compare::`.

mod analyze;
mod compare;
mod formats_behaviour;
mod formats_errors;
mod formats_fixtures;
mod formats_new;
mod formats_real;
mod process;
mod profile;
mod runs_properties;
mod sandbox;
mod verdicts_real;
