//! The server crate's integration tests, built as one test binary: each file beside this one is
//! a module. Run one file's tests with `cargo test -p benchgate-server --test integration audit::`.

mod anchor_schedule;
mod audit;
mod lost_writes;
mod runner_modes;
mod strata;
