//! benchgate-harness: runs commands in interleaved rounds, measures a process without disturbing
//! it, and parses the output of common benchmark harnesses into samples.

pub mod formats;
