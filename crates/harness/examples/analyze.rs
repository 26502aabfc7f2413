//! `benchgate analyze` without the rest of the binary: `cargo run -p benchgate-harness
//! --example analyze -- BASE_FILE HEAD_FILE` (no `--config`: the binary reads it).

use std::process::ExitCode;

use benchgate_harness::cli::{AnalyzeArgs, run_analyze};
use clap::Parser;

fn main() -> ExitCode {
    let args = AnalyzeArgs::parse();
    if args.config.is_some() {
        eprintln!("error: this example reads no --config; use `benchgate analyze --config`");
        return ExitCode::from(2);
    }
    run_analyze(args, None)
}
