//! The profile crate's integration tests, built as one test binary: each file beside this one is
//! a module.

mod callgrind;
mod capping;
mod real_perf;
