//! `benchgate compare`, `benchgate analyze` and `config check`'s run-length warnings: argument
//! structs and the entry points the binary calls. Each entry point prints its report and returns
//! the documented exit status.

pub mod analyze;
pub mod args;
pub mod compare;
pub mod config_check;
pub mod profile;
pub mod progress;
pub mod render;

use std::io::IsTerminal;
use std::process::ExitCode;

pub use args::{AnalyzeArgs, CompareArgs, EXIT_CODES_HELP};

use benchgate_api::agent::ComparisonConfig;

use crate::cli::args::{ClaimArgs, OutputArgs};
use crate::evaluate::{Evaluation, FailOn};
use crate::rounds::MeasurementError;
use crate::worktree::WorktreeError;
use benchgate_stats::GateOutcome;

/// Exit status: no regression.
pub const EXIT_OK: u8 = 0;
/// Exit status: a regression under `--fail-on`.
pub const EXIT_REGRESSION: u8 = 1;
/// Exit status: usage or measurement error.
pub const EXIT_ERROR: u8 = 2;
/// Exit status: no answer yet (a gated row undecided, or nothing gates): not a pass.
pub const EXIT_UNDECIDED: u8 = 3;

/// Why a command produced no report. Every variant exits with status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Input(String),
    #[error("measurement failed: {0}")]
    Measurement(Box<MeasurementError>),
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    #[error("profiling failed: {0}")]
    Profile(Box<crate::profile::ProfileRunError>),
}

impl From<MeasurementError> for CliError {
    fn from(e: MeasurementError) -> Self {
        CliError::Measurement(Box::new(e))
    }
}

/// `benchgate compare`: measures, prints the report to stdout, returns 0, 1, 2 or 3. `plan` is
/// the suite `--config` names, as the service would run it.
pub fn run_compare(args: CompareArgs, plan: Option<ComparisonConfig>) -> ExitCode {
    let display = if args.no_progress {
        progress::Display::Hidden
    } else if std::io::stderr().is_terminal() {
        progress::Display::Bar
    } else {
        progress::Display::Lines
    };
    let claims = match read_claims(&args.claim) {
        Ok(claims) => claims,
        Err(e) => return fail(&e),
    };
    match compare::ignored_change(&args, plan.as_ref()) {
        Ok(Some(ignored)) => {
            return skipped(
                &args,
                "no benchmarked file changed",
                &ignored,
                &ignored.describe(),
            );
        }
        Ok(None) => {}
        Err(e) => return fail(&e),
    }
    match compare::compare(&args, display, plan.as_ref()) {
        Ok(compare::Compared::IdenticalBuild(same)) => {
            skipped(&args, "identical build", &same, &same.describe())
        }
        Ok(compare::Compared::Measured(outcome)) => {
            let mut outcome = *outcome;
            outcome.evaluation.claims =
                benchgate_claims::answer_all(&claims, &outcome.evaluation.results);
            let context = outcome.session.context();
            print_report(&outcome.evaluation, &args.output, &context);
            if args.profile.profile {
                print_profile(&outcome, &args);
            }
            exit_for(&outcome.evaluation, outcome.fail_on)
        }
        Err(e) => fail(&e),
    }
}

/// A session that measured nothing because nothing measured could differ: `why` and the
/// change as JSON, or `text`; exit 0.
fn skipped(args: &CompareArgs, why: &str, change: &impl serde::Serialize, text: &str) -> ExitCode {
    if args.output.json {
        let json = serde_json::json!({ "skipped": why, "change": change });
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("serialises")
        );
    } else {
        print!("{text}");
    }
    ExitCode::from(EXIT_OK)
}

/// `--profile` after the report: on stdout below the table, on stderr when stdout is JSON. A
/// profile that cannot be taken is said so and leaves the exit status to the comparison.
fn print_profile(outcome: &compare::CompareOutcome, args: &CompareArgs) {
    let text = match profile::profile_comparison(outcome, &args.profile, crate::profile::profiler())
    {
        Ok(profiled) => profile::render(&profiled),
        Err(e) => format!("Profile: not taken: {e}\n"),
    };
    if args.output.json {
        eprint!("{text}");
    } else {
        print!("\n{text}");
    }
}

/// `benchgate analyze`: reads both files, prints the report to stdout, returns 0, 1, 2 or 3.
/// `plan` is the suite `--config` names: its rules and gate judge the rows.
pub fn run_analyze(args: AnalyzeArgs, plan: Option<ComparisonConfig>) -> ExitCode {
    let claims = match read_claims(&args.claim) {
        Ok(claims) => claims,
        Err(e) => return fail(&e),
    };
    match analyze::analyze_with(&args, plan.as_ref()) {
        Ok(mut outcome) => {
            outcome.evaluation.claims =
                benchgate_claims::answer_all(&claims, &outcome.evaluation.results);
            for line in &outcome.formats_read {
                eprintln!("{line}");
            }
            for warning in &outcome.warnings {
                eprintln!("warning: {warning}");
            }
            print_report(&outcome.evaluation, &args.output, &outcome.context);
            exit_for(&outcome.evaluation, outcome.fail_on)
        }
        Err(e) => fail(&e),
    }
}

/// The report in the shape `output` asks for: JSON, Markdown or a plain table, the table
/// followed by the margin, the geomean summary, the run's context and the diagnostics.
pub fn format_report(eval: &Evaluation, output: &OutputArgs, context: &[String]) -> String {
    let report = eval.report();
    if output.json {
        let json = serde_json::to_string_pretty(&report).expect("report serialises");
        return json + "\n";
    }
    let mut out = claims_section(eval, output.markdown);
    out.push_str(&if output.markdown {
        render::markdown(eval)
    } else {
        render::table(eval)
    });
    let lines = render::margin_note(eval)
        .into_iter()
        .chain(render::geomean_line(&report.benchmarks))
        .chain(context.iter().cloned());
    for line in lines {
        out.push_str(if output.markdown { "\n" } else { "" });
        out.push_str(&line);
        out.push('\n');
    }
    let notes = render::notes(&report.benchmarks);
    if !notes.is_empty() {
        out.push_str(if output.markdown {
            "\n**Hints** (checks of the model, one row each: with many rows a few are chance; none changes a verdict)\n\n"
        } else {
            "Hints (checks of the model, one row each: with many rows a few are chance; none changes a verdict):\n"
        });
        for note in notes {
            let bullet = if output.markdown { "- " } else { "  " };
            out.push_str(bullet);
            out.push_str(&note);
            out.push('\n');
        }
    }
    out
}

/// "Claims (answered on this machine):" and a line per claim, above the table; empty without
/// claims.
fn claims_section(eval: &Evaluation, markdown: bool) -> String {
    if eval.claims.is_empty() {
        return String::new();
    }
    let mut out = String::from(if markdown {
        "**Claims** (answered by this session's intervals; a result holds for the processor it \
         was measured on)\n\n"
    } else {
        "Claims (answered by this session's intervals; a result holds for the processor it was \
         measured on):\n"
    });
    for line in benchgate_claims::lines(&eval.claims) {
        out.push_str(if markdown { "- " } else { "  " });
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The claims `--claim` and `--claims-from` name, read before anything runs so a malformed one
/// costs no measuring.
fn read_claims(args: &ClaimArgs) -> Result<Vec<benchgate_claims::Claim>, CliError> {
    let mut claims = Vec::new();
    for text in &args.claims {
        let read = benchgate_claims::explicit(&format!("/benchgate claim {text}"))
            .map_err(|e| CliError::Usage(format!("--claim {text:?}: {e}")))?;
        claims.extend(read);
    }
    if let Some(path) = &args.claims_from {
        let body = std::fs::read_to_string(path).map_err(|e| {
            CliError::Input(format!(
                "--claims-from: cannot read {}: {e}",
                path.display()
            ))
        })?;
        let read = benchgate_claims::read(&body);
        if read.is_empty() {
            eprintln!(
                "warning: --claims-from {}: no claim found (a pasted benchstat, criterion or \
                 hyperfine table, or a sentence such as \"`parse` is 20% faster\")",
                path.display()
            );
        }
        claims.extend(read);
    }
    Ok(claims)
}

fn print_report(eval: &Evaluation, output: &OutputArgs, context: &[String]) {
    print!("{}", format_report(eval, output, context));
}

fn exit_for(eval: &Evaluation, fail_on: FailOn) -> ExitCode {
    ExitCode::from(match eval.outcome(fail_on) {
        GateOutcome::Fail => EXIT_REGRESSION,
        GateOutcome::Undecided => EXIT_UNDECIDED,
        GateOutcome::Pass => EXIT_OK,
    })
}

/// Prints a usage error found before a command could start (a broken `--config`); status 2.
pub fn usage_error(message: &str) -> ExitCode {
    fail(&CliError::Usage(message.to_owned()))
}

fn fail(e: &CliError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(EXIT_ERROR)
}
