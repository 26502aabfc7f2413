//! `benchgate analyze` without the rest of the binary: `cargo run -p benchgate-harness
//! --example analyze -- BASE_FILE HEAD_FILE`.

use std::process::ExitCode;

use benchgate_harness::cli::{AnalyzeArgs, run_analyze};
use clap::Parser;

fn main() -> ExitCode {
    run_analyze(AnalyzeArgs::parse())
}
