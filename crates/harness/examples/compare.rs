//! `benchgate compare` without the rest of the binary: `cargo run -p benchgate-harness
//! --example compare -- --base 'sleep 0.02' --head 'sleep 0.022'`.

use std::process::ExitCode;

use benchgate_harness::cli::{CompareArgs, run_compare};
use clap::Parser;

fn main() -> ExitCode {
    run_compare(CompareArgs::parse(), None)
}
