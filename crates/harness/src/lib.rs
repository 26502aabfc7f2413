//! benchgate-harness: runs commands in interleaved rounds, measures a process without disturbing
//! it, and parses the output of common benchmark harnesses into samples.

pub mod capture;
pub mod env;
pub mod formats;
pub mod process;
pub mod quieting;
pub mod schedule;
