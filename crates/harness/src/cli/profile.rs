//! `benchgate compare --profile`: after the report, both sides' commands profiled with perf, the
//! functions whose share of samples moved most, and a differential flame graph written to a file.

use std::path::PathBuf;

use benchgate_profile::{FunctionChange, Limits, changes, differential_svg, unresolved_share};
use benchgate_stats::words::{count, percentage_points, unsigned_percent};

use crate::cli::CliError;
use crate::cli::args::ProfileArgs;
use crate::cli::compare::CompareOutcome;
use crate::profile::{Profiler, SideProfile, profile_side};

/// How many functions the printed profile lists.
pub const TOP_FUNCTIONS: usize = 10;

/// What `--profile` found.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileOutcome {
    /// No profile was taken; `reason` says why in one line.
    Unavailable {
        reason: String,
    },
    Profiled(ProfileReport),
}

/// Both sides profiled and compared.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileReport {
    /// The perf event sampled (`cycles`, or `cpu-clock` without hardware counters).
    pub event: String,
    /// Profiled runs per side.
    pub runs: u32,
    /// Every function, largest change in self share first.
    pub changes: Vec<FunctionChange>,
    /// Where the differential flame graph was written.
    pub svg: PathBuf,
    /// What a reader should know about the profiles (missing symbols, capping).
    pub notes: Vec<String>,
}

/// Profiles the base and head commands of `outcome` as `args` asks, with `profiler`, and writes
/// the flame graph. A profiler that is unavailable is an outcome, not an error: the comparison
/// stands without it.
pub fn profile_comparison(
    outcome: &CompareOutcome,
    args: &ProfileArgs,
    profiler: &Profiler,
) -> Result<ProfileOutcome, CliError> {
    let event = match profiler {
        Profiler::Unavailable { reason } => {
            return Ok(ProfileOutcome::Unavailable {
                reason: reason.clone(),
            });
        }
        Profiler::Perf { event } => event,
    };
    let limits = Limits::default();
    let side = |command| {
        profile_side(command, &outcome.runner, event, args.profile_runs, limits)
            .map_err(|e| CliError::Profile(Box::new(e)))
    };
    let base = side(&outcome.session.base)?;
    let head = side(&outcome.session.head)?;
    let title = format!(
        "benchgate compare: head against base ({event}, {} runs per side)",
        args.profile_runs
    );
    let svg = differential_svg(&base.folded, &head.folded, &title)
        .map_err(|e| CliError::Input(format!("cannot draw the flame graph: {e}")))?;
    std::fs::write(&args.profile_svg, svg).map_err(|e| {
        CliError::Input(format!("cannot write {}: {e}", args.profile_svg.display()))
    })?;
    let mut notes = Vec::new();
    for (name, side) in [("base", &base), ("head", &head)] {
        notes.extend(side_notes(name, side));
    }
    Ok(ProfileOutcome::Profiled(ProfileReport {
        event: event.clone(),
        runs: args.profile_runs,
        changes: changes(&base.folded, &head.folded),
        svg: args.profile_svg.clone(),
        notes,
    }))
}

/// What a reader should know about one side's profile.
fn side_notes(name: &str, side: &SideProfile) -> Vec<String> {
    let mut notes = Vec::new();
    if side.folded.is_empty() {
        notes.push(format!(
            "{name}: perf recorded no samples (a run too short to sample?)"
        ));
    }
    // The leaf, not any frame: the dynamic loader leaves an [unknown] frame in a few stacks of
    // every program, which is not what a reader must fix.
    let unresolved = unresolved_share(&side.folded);
    if unresolved > 0.0 {
        notes.push(format!(
            "{name}: {} of samples run in code without symbols, shown as addresses (build with \
             debug info, do not strip, keep frame pointers)",
            unsigned_percent(unresolved)
        ));
    }
    if side.dropped_frames {
        notes.push(format!(
            "{name}: stacks deeper than the limit were cut (shown as [deeper frames])"
        ));
    }
    if side.merged_stacks > 0 {
        notes.push(format!(
            "{name}: {} light stacks were added up as [other stacks] to keep the profile small",
            side.merged_stacks
        ));
    }
    notes
}

/// The profile as the terminal shows it: the top functions by change in self share, where the
/// flame graph is, the event, and the notes.
pub fn render(outcome: &ProfileOutcome) -> String {
    let report = match outcome {
        ProfileOutcome::Unavailable { reason } => {
            return format!("Profile: not taken: {reason}\n");
        }
        ProfileOutcome::Profiled(report) => report,
    };
    let mut out = format!(
        "Profile ({} per side under perf record -e {} -g, never counted as samples); \
         change in share of samples, head minus base:\n",
        count(report.runs as usize, "run"),
        report.event
    );
    out.push_str(&format!("  {:>9}  {:>9}  function\n", "self", "total"));
    for change in report.changes.iter().take(TOP_FUNCTIONS) {
        out.push_str(&format!(
            "  {:>9}  {:>9}  {}\n",
            percentage_points(change.self_pp),
            percentage_points(change.total_pp),
            change.function
        ));
    }
    if report.changes.is_empty() {
        out.push_str("  (no samples on either side)\n");
    }
    out.push_str(&format!(
        "Differential flame graph: {} (widths: head; red grew, blue shrank)\n",
        report.svg.display()
    ));
    for note in &report.notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(function: &str, self_pp: f64, total_pp: f64) -> FunctionChange {
        FunctionChange {
            function: function.to_owned(),
            self_pp,
            total_pp,
            base_self_share: 0.0,
            head_self_share: self_pp.max(0.0),
        }
    }

    fn side_notes_line() -> String {
        // A stripped binary's frames, as inferno shows them.
        let side = SideProfile {
            folded: benchgate_profile::Folded::parse("prog;main;[prog <1187>] 3\n").unwrap(),
            runs: 3,
            dropped_frames: false,
            merged_stacks: 0,
        };
        side_notes("head", &side).remove(0)
    }

    #[test]
    fn the_profile_as_printed() {
        let mut changes = vec![
            change("slow_path", 33.58, 33.58),
            change("compute", -11.21, -11.21),
            change("parse_input", -10.9, -10.9),
            change("base_work", 0.02, -22.4),
        ];
        changes.extend((0..10).map(|i| change(&format!("unlisted_{i}"), 0.0, 0.0)));
        let profiled = ProfileOutcome::Profiled(ProfileReport {
            event: "cpu-clock".into(),
            runs: 3,
            changes,
            svg: "benchgate-profile.svg".into(),
            notes: vec![side_notes_line()],
        });
        insta::assert_snapshot!("profiled", render(&profiled));
        let unavailable = ProfileOutcome::Unavailable {
            reason: "perf is not on PATH (Debian: apt-get install linux-perf)".into(),
        };
        insta::assert_snapshot!("unavailable", render(&unavailable));
    }
}
