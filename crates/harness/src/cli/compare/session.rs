//! A session's record (`--record`): what it ran, how it stopped, and the checks that let
//! `--resume` continue it and `--aa` reuse recorded A/A sessions.

use std::collections::HashMap;

use benchgate_stats::NoiseFloor;
use serde::{Deserialize, Serialize};

use crate::cli::CliError;
use crate::command::BenchCommand;
use crate::fingerprint::MachineFingerprint;
use crate::quieting::Quieting;
use crate::rounds::Round;
use crate::samples::{PairedSamples, SeriesKey};
use crate::schedule::Schedule;

/// Why a session stopped measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every gated benchmark had a verdict.
    AllDecided,
    /// `--rounds N` were run.
    FixedRounds,
    /// `--max-rounds` (or the suite's `rounds`) was reached without a verdict for every
    /// benchmark.
    MaxRounds,
    /// `--budget` (or the suite's `budget`) was spent without a verdict for every benchmark.
    Budget,
    /// A gated row is a regression: the gate fails whatever the undecided rows show.
    Regression,
}

/// Everything a session did, for `--record` and the report's context lines.
#[derive(Debug, Clone, Serialize)]
pub struct SessionRecord {
    pub machine: MachineFingerprint,
    pub base: BenchCommand,
    pub head: BenchCommand,
    /// Commits measured, in the revisions form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revisions: Option<[String; 2]>,
    /// Why base is not the commit `--base-rev` names: the branch moved on since head branched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_note: Option<String>,
    /// Benchmark files the base side took from head (`--bench-from-head`, `bench_from_head`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench_from_head: Option<BenchFromHead>,
    pub format: String,
    /// The `.benchgate.toml` suite run (`--config`), when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    pub schedule: Schedule,
    /// Warm-up rounds run and discarded.
    pub warmup_rounds: u32,
    pub quieting: Quieting,
    /// Names of the variables the benchmark saw (values are not recorded).
    pub env: Vec<String>,
    /// The counter of the counted runs (`--counts`), when any ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted_by: Option<String>,
    pub stop: StopReason,
    /// Rounds taken over from the `--resume` recording (counted in `rounds`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resumed_rounds: usize,
    /// Median wall time of one measured round (both sides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_per_round: Option<f64>,
    /// What an answer still needs, in rounds and minutes at this session's pace, when a gated
    /// row is undecided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forecast: Option<String>,
    /// What the runs' own errors against their spread between runs say about run length, where
    /// the harness states its bounds (criterion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_length: Option<String>,
    /// Wall time of the whole session: checkout, builds, warm-up and rounds.
    pub elapsed_seconds: f64,
    /// n* per benchmark planned from the A/A floor (no `--n-star`), as the service plans.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub planned_n_star: std::collections::BTreeMap<String, u64>,
    /// The A/A rounds of the base against itself run first (`--aa-rounds`), if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aa_rounds: Vec<Round>,
    pub rounds: Vec<Round>,
    /// The counted runs (`--counts`), each a round of count rows only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counted: Vec<Round>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The base side ran head's version of these benchmark files.
#[derive(Debug, Clone, Serialize)]
pub struct BenchFromHead {
    pub globs: Vec<String>,
    /// What was taken, e.g. "2 files (1 new)".
    pub files: String,
}

/// The part of a `--record` file that `--aa-from` reads.
#[derive(Debug, Deserialize)]
struct RecordedAa {
    #[serde(default)]
    aa_rounds: Vec<Round>,
}

/// The A/A sessions of `--aa-from`, each as its rounds.
pub(super) fn recorded_aa(paths: &[std::path::PathBuf]) -> Result<Vec<Vec<Round>>, CliError> {
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Input(format!("cannot read {}: {e}", path.display())))?;
            let record: RecordedAa = serde_json::from_str(&text).map_err(|e| {
                CliError::Input(format!(
                    "{}: not a `benchgate compare --record` file: {e}",
                    path.display()
                ))
            })?;
            if record.aa_rounds.len() < 2 {
                return Err(CliError::Input(format!(
                    "{}: holds no A/A session (record one with --aa-rounds N --record FILE)",
                    path.display()
                )));
            }
            Ok(record.aa_rounds)
        })
        .collect()
}

/// The noise floor per series from A/A sessions (each its rounds), as a runner's calibration
/// pools them; a series needs two pairs in a session to count it.
/// The part of a `--record` file that `--resume` continues.
#[derive(Debug, Deserialize)]
pub(super) struct RecordedSession {
    pub(super) machine: MachineFingerprint,
    pub(super) base: BenchCommand,
    pub(super) head: BenchCommand,
    #[serde(default)]
    pub(super) revisions: Option<[String; 2]>,
    pub(super) format: String,
    #[serde(default)]
    pub(super) suite: Option<String>,
    pub(super) schedule: Schedule,
    #[serde(default)]
    pub(super) seconds_per_round: Option<f64>,
    #[serde(default)]
    pub(super) aa_rounds: Vec<Round>,
    pub(super) rounds: Vec<Round>,
    #[serde(default)]
    pub(super) counted: Vec<Round>,
}

pub(super) fn recorded_session(path: &std::path::Path) -> Result<RecordedSession, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Input(format!("--resume: cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::Input(format!(
            "--resume: {} is not a `benchgate compare --record` file: {e}",
            path.display()
        ))
    })
}

/// Why this session cannot continue `recorded`: its rounds measured something else, or
/// elsewhere, so adding to them would mix two experiments.
pub(super) fn resume_mismatch(
    recorded: &RecordedSession,
    session: &ResumeCheck<'_>,
) -> Option<String> {
    let same_command = |a: &BenchCommand, b: &BenchCommand| a.argv == b.argv && a.env == b.env;
    let machine = |m: &MachineFingerprint| (m.cpu_model.clone(), m.logical_cores, m.memory_bytes);
    if recorded.revisions.as_ref() != session.revisions {
        return Some(format!(
            "it measured {}, this session {}",
            revisions_words(recorded.revisions.as_ref()),
            revisions_words(session.revisions)
        ));
    }
    if !same_command(&recorded.base, session.base) || !same_command(&recorded.head, session.head) {
        return Some(format!(
            "it ran base `{}` and head `{}`, this session `{}` and `{}`",
            recorded.base.display(),
            recorded.head.display(),
            session.base.display(),
            session.head.display()
        ));
    }
    if recorded.format != session.format {
        return Some(format!(
            "it read format {}, this session {}",
            recorded.format, session.format
        ));
    }
    if recorded.suite.as_deref() != session.suite {
        return Some(format!(
            "it ran suite {}, this session {}",
            recorded.suite.as_deref().unwrap_or("none"),
            session.suite.unwrap_or("none")
        ));
    }
    if recorded.schedule != session.schedule {
        return Some(format!(
            "it followed schedule {:?}, this session {:?} (leave --schedule and --seed out to \
             continue its own)",
            recorded.schedule, session.schedule
        ));
    }
    if machine(&recorded.machine) != machine(session.machine) {
        return Some(format!(
            "it was measured on {}, this is {}",
            recorded.machine.summary(),
            session.machine.summary()
        ));
    }
    None
}

/// What a resumed session is, to hold against its recording.
pub(super) struct ResumeCheck<'a> {
    pub(super) revisions: Option<&'a [String; 2]>,
    pub(super) base: &'a BenchCommand,
    pub(super) head: &'a BenchCommand,
    pub(super) format: &'a str,
    pub(super) suite: Option<&'a str>,
    pub(super) schedule: Schedule,
    pub(super) machine: &'a MachineFingerprint,
}

pub(super) fn revisions_words(revisions: Option<&[String; 2]>) -> String {
    match revisions {
        Some([b, h]) => format!("base {b} and head {h}"),
        None => "two commands".to_owned(),
    }
}

pub(super) fn aa_floors(sessions: &[Vec<Round>]) -> HashMap<SeriesKey, NoiseFloor> {
    let mut logs: HashMap<SeriesKey, Vec<Vec<f64>>> = HashMap::new();
    for rounds in sessions {
        let mut samples = PairedSamples::default();
        for r in rounds {
            samples.push_round(&r.base, &r.head, r.base_first());
        }
        for s in samples.series().iter().filter(|s| s.base.len() >= 2) {
            if let Ok(d) = benchgate_stats::paired_log_ratios(&s.base, &s.head) {
                logs.entry(s.key.clone()).or_default().push(d);
            }
        }
    }
    logs.into_iter()
        .filter_map(|(key, d)| Some((key, NoiseFloor::from_sessions(&d).ok()?)))
        .collect()
}

impl SessionRecord {
    /// Context lines printed under the table: workload, schedule and machine.
    pub fn context(&self) -> Vec<String> {
        let schedule = match self.schedule {
            Schedule::Abba => "ABBA".to_owned(),
            Schedule::Random { seed } => format!("random (seed {seed})"),
        };
        let stop = match self.stop {
            StopReason::AllDecided => "every gated benchmark decided",
            StopReason::FixedRounds => "fixed round count",
            StopReason::MaxRounds => "round limit reached",
            StopReason::Budget => "time budget spent",
            StopReason::Regression => "the gate failed: a gated regression",
        };
        let mut lines = vec![
            format!("base: {}", self.base.display()),
            format!("head: {}", self.head.display()),
        ];
        if let Some([b, h]) = &self.revisions {
            lines.push(format!("revisions: base {b}, head {h}"));
        }
        if let Some(note) = &self.base_note {
            lines.push(note.clone());
        }
        if let Some(taken) = &self.bench_from_head {
            lines.push(format!(
                "benchmark code from head on both sides ({}): {}",
                taken.globs.join(", "),
                taken.files
            ));
        }
        if let Some(suite) = &self.suite {
            lines.push(format!(
                "suite: {suite} from --config (its build, run, format, rules and gate)"
            ));
        }
        lines.push(format!(
            "{} rounds in {} ({stop}), {} warm-up round(s) discarded, schedule {schedule}, format {}",
            self.rounds.len(),
            benchgate_stats::words::elapsed(self.elapsed_seconds),
            self.warmup_rounds,
            self.format
        ));
        if self.resumed_rounds > 0 {
            lines.push(format!(
                "{} of the rounds continued from the --resume recording",
                self.resumed_rounds
            ));
        }
        if let Some(forecast) = &self.forecast {
            lines.push(forecast.clone());
        }
        if let Some(advice) = &self.run_length {
            lines.push(advice.clone());
        }
        let q = &self.quieting;
        lines.push(format!(
            "quieting: {}, ASLR {}, load limit {}; instructions {}",
            if q.cpus.is_empty() {
                "not pinned to CPUs".to_owned()
            } else {
                format!("pinned to CPUs {:?}", q.cpus)
            },
            if q.disable_aslr { "off" } else { "on" },
            q.max_load
                .map_or_else(|| "none".to_owned(), |l| l.to_string()),
            match &self.counted_by {
                Some(counter) => format!(
                    "counted by {counter}, {} runs per side ({} where they differ)",
                    benchgate_api::counts::COUNTED_RUNS,
                    benchgate_api::counts::MAX_COUNTED_RUNS
                ),
                None => "not counted".to_owned(),
            },
        ));
        if !self.planned_n_star.is_empty() {
            let shown: Vec<String> = self
                .planned_n_star
                .iter()
                .take(5)
                .map(|(name, n)| format!("{name} {n}"))
                .collect();
            let more = self.planned_n_star.len().saturating_sub(5);
            lines.push(format!(
                "n* planned from the A/A floor, as a runner plans: {}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
        lines.push(format!("machine: {}", self.machine.summary()));
        lines
    }
}
