//! benchgate-harness: runs commands in interleaved rounds, measures a process without disturbing
//! it, and parses the output of common benchmark harnesses into samples. `cli` holds the
//! `benchgate compare` and `benchgate analyze` commands built on them.

pub mod artifacts;
pub mod capture;
pub mod cli;
mod clock;
pub mod command;
pub mod counted;
pub mod counter;
pub mod disk;
pub mod env;
pub mod evaluate;
pub mod fingerprint;
pub mod formats;
pub mod git;
pub mod limits;
pub mod perf;
pub mod plan;
pub mod process;
pub mod profile;
pub mod program;
pub mod quieting;
pub mod rounds;
pub mod run_lengths;
pub mod samples;
pub mod sandbox;
pub mod schedule;
mod watch;
pub mod worktree;
