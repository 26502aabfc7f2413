//! `benchgate compare`: run base and head interleaved until every benchmark has a verdict (or a
//! round limit), then report. Two forms: two commands, or two revisions of the current git
//! repository built and run in their own worktrees.

use std::time::Duration;

use benchgate_api::Side;
use std::collections::HashMap;

use benchgate_stats::NoiseFloor;
use serde::{Deserialize, Serialize};

use crate::cli::CliError;
use crate::cli::args::{CompareArgs, ScheduleKind};
use crate::cli::progress::{Display, Progress};
use crate::command::BenchCommand;
use crate::env::ScrubbedEnv;
use crate::evaluate::{Evaluation, FailOn, evaluate};
use crate::fingerprint::{self, MachineFingerprint};
use crate::plan::{SuitePlan, suite_plan};
use crate::quieting::{Quieting, parse_cpu_list};
use crate::rounds::{Round, RoundRunner, RunnerConfig};
use crate::samples::{PairedSamples, SeriesKey};
use crate::schedule::Schedule;
use crate::worktree::{self, HeadBenchmarks, Repository};
use benchgate_api::agent::{ComparisonConfig, MEASURE_SECS, measure_text};
use benchgate_api::paths::PathGlobs;
use benchgate_api::rules::compile_pattern;
use benchgate_api::{BenchmarkRule, RuleSet};

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
    pub instructions_counted: bool,
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
fn recorded_aa(paths: &[std::path::PathBuf]) -> Result<Vec<Vec<Round>>, CliError> {
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
struct RecordedSession {
    machine: MachineFingerprint,
    base: BenchCommand,
    head: BenchCommand,
    #[serde(default)]
    revisions: Option<[String; 2]>,
    format: String,
    #[serde(default)]
    suite: Option<String>,
    schedule: Schedule,
    #[serde(default)]
    seconds_per_round: Option<f64>,
    #[serde(default)]
    aa_rounds: Vec<Round>,
    rounds: Vec<Round>,
}

fn recorded_session(path: &std::path::Path) -> Result<RecordedSession, CliError> {
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
fn resume_mismatch(recorded: &RecordedSession, session: &ResumeCheck<'_>) -> Option<String> {
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
struct ResumeCheck<'a> {
    revisions: Option<&'a [String; 2]>,
    base: &'a BenchCommand,
    head: &'a BenchCommand,
    format: &'a str,
    suite: Option<&'a str>,
    schedule: Schedule,
    machine: &'a MachineFingerprint,
}

fn revisions_words(revisions: Option<&[String; 2]>) -> String {
    match revisions {
        Some([b, h]) => format!("base {b} and head {h}"),
        None => "two commands".to_owned(),
    }
}

fn aa_floors(sessions: &[Vec<Round>]) -> HashMap<SeriesKey, NoiseFloor> {
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
            if self.instructions_counted {
                "counted"
            } else {
                "not counted"
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

/// What `compare` found, before it is printed.
#[derive(Debug)]
pub struct CompareOutcome {
    pub evaluation: Evaluation,
    pub session: SessionRecord,
    /// What fails the gate: the flag, else the suite's `[gate]`, else `regression`.
    pub fail_on: FailOn,
    /// How the session's runs were made, for further runs of the same commands (`--profile`).
    pub runner: RunnerConfig,
}

/// A change `compare --config` does not measure: every file between the two commits matches
/// the suite's `ignore`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredChange {
    pub base: String,
    pub head: String,
    pub files: Vec<String>,
    pub ignore: Vec<String>,
}

impl IgnoredChange {
    /// What `compare` prints instead of a table.
    pub fn describe(&self) -> String {
        use benchgate_stats::words::short_sha;
        let files = match self.files.as_slice() {
            [one] => format!("the one file changed ({one}) matches"),
            many => format!("all {} files changed match", many.len()),
        };
        format!(
            "no benchmarked file changed between base {} and head {}: {files} the suite's \
             ignore ({}); nothing was run\n",
            short_sha(&self.base),
            short_sha(&self.head),
            self.ignore.join(", ")
        )
    }
}

/// With a suite that sets `ignore` and the revisions form: the change between the commits
/// that would be measured (the merge base, as [`compare`] picks it) when the globs cover it.
pub fn ignored_change(
    args: &CompareArgs,
    plan: Option<&ComparisonConfig>,
) -> Result<Option<IgnoredChange>, CliError> {
    let Some(spec) = plan.map(|p| &p.benchmark).filter(|b| !b.ignore.is_empty()) else {
        return Ok(None);
    };
    let (Some(base_rev), Some(head_rev)) = (&args.base_rev, &args.head_rev) else {
        return Ok(None);
    };
    let globs = PathGlobs::try_from(spec.ignore.clone())
        .map_err(|e| CliError::Usage(format!("--config: ignore: {e}")))?;
    let cwd = match &args.repo {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| CliError::Usage(format!("no current directory: {e}")))?,
    };
    let repo = Repository::discover(&cwd)?;
    let (mut base, head) = (repo.resolve(base_rev)?, repo.resolve(head_rev)?);
    if !args.base_tip
        && let Some(point) = repo.branch_point(base_rev, &base, &head)?
    {
        base = point.merge_base;
    }
    let files = repo.changed_files(&base, &head)?;
    Ok(globs
        .cover(files.iter().map(String::as_str))
        .then(|| IgnoredChange {
            base,
            head,
            files,
            ignore: spec.ignore.clone(),
        }))
}

/// The suite `--config` named, as the harness runs it, with its gate and rules.
struct Suite {
    plan: SuitePlan,
    config: ComparisonConfig,
}

/// Runs the session `args` describes, showing its progress on stderr as `display` says; with
/// `plan` (the suite `--config` names), what it builds, runs and judges comes from the suite.
pub fn compare(
    args: &CompareArgs,
    display: Display,
    plan: Option<&ComparisonConfig>,
) -> Result<Compared, CliError> {
    let suite = plan
        .map(|config| {
            suite_plan(&config.benchmark)
                .map(|plan| Suite {
                    plan,
                    config: config.clone(),
                })
                .map_err(|e| CliError::Usage(format!("--config: {e}")))
        })
        .transpose()?;
    if args.config.is_some() && suite.is_none() {
        return Err(CliError::Usage(
            "--config was given but its suite was not read".into(),
        ));
    }
    let (base, head, revisions) = commands(args, suite.as_ref())?;
    let resumed = args.resume.as_deref().map(recorded_session).transpose()?;
    let schedule = match (&suite, args.schedule, args.seed) {
        // A resumed session continues its own order.
        (_, None, None) if resumed.is_some() => resumed.as_ref().expect("resumed").schedule,
        (Some(s), None, None) => s.plan.schedule,
        _ => schedule(args)?,
    };
    let suite_name = suite.as_ref().map(|s| match &s.config.suite {
        Some(name) => format!("[[suite]] {name}"),
        None => "[benchmark]".to_owned(),
    });
    let mut policy = args.policy.policy();
    let mut fail_on = args.policy.fail_on();
    if let Some(s) = &suite {
        // The suite's gate, unless a flag says otherwise; its rules always.
        if args.policy.min_effect.is_none() {
            policy.min_effect_pct = 100.0 * s.config.gate.min_effect;
        }
        fail_on = args.policy.fail_on.unwrap_or(s.config.gate.fail_on);
        policy.rules = s.config.rules.clone();
        if args.policy.tolerance.is_none() {
            policy.tolerance = s.config.gate.tolerance;
        }
    }
    let until = until_globs(&args.until)?;
    let mut aa_sessions = recorded_aa(&args.aa_from)?;
    if !(policy.n_star.is_finite() && policy.n_star >= 1.0) {
        return Err(CliError::Usage(format!(
            "--n-star must be at least 1, got {}",
            policy.n_star
        )));
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(CliError::Usage(format!(
            "--timeout must be positive, got {}",
            args.timeout
        )));
    }
    let quieting = Quieting {
        cpus: match &args.pin_cpus {
            Some(list) => parse_cpu_list(list).map_err(|e| CliError::Usage(e.to_string()))?,
            None => Vec::new(),
        },
        disable_aslr: args.no_aslr,
        max_load: args.max_load,
    };
    let mut env =
        ScrubbedEnv::from_parent(&args.env).map_err(|e| CliError::Usage(e.to_string()))?;
    let (format, warmup, build, timeout) = match &suite {
        Some(s) => {
            for (name, value) in s.plan.run_env.vars() {
                env.set(name, value.to_owned());
            }
            (
                s.plan.format,
                s.plan.warmup,
                s.plan.build.clone(),
                s.plan
                    .timeout
                    .unwrap_or(Duration::from_secs_f64(args.timeout)),
            )
        }
        None => (
            args.format,
            args.warmup,
            args.build.clone(),
            Duration::from_secs_f64(args.timeout),
        ),
    };
    let config = RunnerConfig {
        format,
        env: env.clone(),
        timeout: Some(timeout),
        quieting: quieting.clone(),
        count_instructions: args.instructions,
        measure_secs: args
            .measure_secs
            .or(suite.as_ref().and_then(|s| s.config.benchmark.measure_secs)),
        ..RunnerConfig::default()
    };
    // As CI runs the suite: its `rounds` bound a session and its `budget` its measuring time.
    let limit = args
        .rounds
        .or(args.max_rounds)
        .or(suite.as_ref().map(|s| s.config.benchmark.rounds))
        .unwrap_or(DEFAULT_MAX_ROUNDS);
    let budget = args
        .budget
        .or(suite.as_ref().and_then(|s| s.config.benchmark.budget_secs))
        .map(Duration::from_secs);
    let mut display = Progress::new(u64::from(limit), display);

    let bench_from_head = bench_from_head_globs(args, suite.as_ref())?;
    let artifact_globs = PathGlobs::try_from(
        suite
            .as_ref()
            .map(|s| s.config.benchmark.artifacts.clone())
            .unwrap_or_default(),
    )
    .map_err(|e| CliError::Usage(format!("--config: artifacts: {e}")))?;
    let mut from_head = None;
    let mut base_note = None;
    let (base, head, revisions) = match revisions {
        None => (base, head, None),
        Some((repo, [base_rev, head_rev])) => {
            let mut shas = [repo.resolve(&base_rev)?, repo.resolve(&head_rev)?];
            if !args.base_tip
                && let Some(point) = repo.branch_point(&base_rev, &shas[0], &shas[1])?
            {
                let note = merge_base_note(&base_rev, &shas[0], &point);
                display.phase(&note);
                base_note = Some(note);
                shas[0] = point.merge_base;
            }
            let taken = HeadBenchmarks::plan(&repo.toplevel, &shas[0], &shas[1], &bench_from_head)?;
            let mut dirs = Vec::new();
            for (side, sha) in [(Side::Base, &shas[0]), (Side::Head, &shas[1])] {
                display.phase(&format!(
                    "checking out {} {}",
                    side.as_str(),
                    benchgate_stats::words::short_sha(sha)
                ));
                let dir = repo.checkout(side, sha)?;
                if side == Side::Base && !taken.is_empty() {
                    display.phase(&format!(
                        "base takes head's benchmark files: {}",
                        taken.summary()
                    ));
                    taken.apply(&dir, &shas[1])?;
                }
                if let Some(build) = &build {
                    display.phase(&format!(
                        "building {} {}",
                        side.as_str(),
                        benchgate_stats::words::short_sha(sha)
                    ));
                    crate::artifacts::remove_before_build(&dir, &artifact_globs)
                        .map_err(|e| CliError::Input(e.to_string()))?;
                    worktree::build(&dir, side, build)?;
                }
                dirs.push(dir);
            }
            if build.is_some()
                && let Some(build) = identical_build(&artifact_globs, &dirs)?
            {
                display.finish();
                return Ok(Compared::IdenticalBuild(IdenticalBuildOutcome {
                    base: shas[0].clone(),
                    head: shas[1].clone(),
                    build,
                }));
            }
            if !bench_from_head.patterns().is_empty() {
                from_head = Some(BenchFromHead {
                    globs: bench_from_head.patterns().to_vec(),
                    files: taken.summary(),
                });
            }
            (base.in_dir(&dirs[0]), head.in_dir(&dirs[1]), Some(shas))
        }
    };

    if let Some(recorded) = &resumed {
        let check = ResumeCheck {
            revisions: revisions.as_ref(),
            base: &base,
            head: &head,
            format: &format.to_string(),
            suite: suite_name.as_deref(),
            schedule,
            machine: &fingerprint::current(),
        };
        if let Some(why) = resume_mismatch(recorded, &check) {
            return Err(CliError::Usage(format!(
                "--resume {}: cannot continue that session: {why}",
                args.resume.as_ref().expect("resumed").display()
            )));
        }
    }
    let mut aa_rounds = resumed
        .as_ref()
        .map(|r| r.aa_rounds.clone())
        .unwrap_or_default();
    if aa_rounds.len() >= 2 {
        aa_sessions.push(aa_rounds.clone());
    }
    if let Some(n) = args.aa_rounds {
        // The base against itself, in its own worktree for both sides, as a runner calibrates.
        let mut aa = RoundRunner::new(base.clone(), base.clone(), config.clone(), Schedule::Abba);
        display.phase("A/A: warming up");
        aa.warm_up(warmup)?;
        for k in 1..=n {
            display.phase(&format!("A/A round {k}/{n} (base against itself)"));
            aa_rounds.push(aa.run_round()?);
        }
        aa_sessions.push(aa_rounds.clone());
    }
    let floors = aa_floors(&aa_sessions);
    if args.policy.n_star.is_none() {
        // As the service plans a comparison on a runner with floors: n* per benchmark.
        let keyed: Vec<((&str, &str), NoiseFloor)> = floors
            .iter()
            .map(|(k, f)| ((k.benchmark.as_str(), k.metric.as_str()), *f))
            .collect();
        policy.planned = benchgate_stats::plan_per_benchmark(
            &keyed,
            &RuleSet::new(&policy.rules),
            policy.min_effect_pct / 100.0,
            policy.alpha,
            benchgate_stats::AnalysisOptions::default().rounds_cap,
        );
    }
    let mut runner = RoundRunner::new(base.clone(), head.clone(), config.clone(), schedule);
    let mut samples = PairedSamples::default();
    let mut rounds = Vec::new();
    if let Some(recorded) = resumed.as_ref().filter(|r| !r.rounds.is_empty()) {
        display.phase(&format!(
            "continuing {} recorded rounds",
            recorded.rounds.len()
        ));
        for round in &recorded.rounds {
            samples.push_round(&round.base, &round.head, round.base_first());
        }
        rounds = recorded.rounds.clone();
        runner.continue_after(rounds.len() as u64);
    }
    let mut warmed = false;
    let mut round_secs = Vec::new();
    let mut given_up = std::collections::BTreeSet::new();
    let measuring = std::time::Instant::now();
    let (evaluation, stop) = loop {
        // A resumed session first judges what it holds: no round for what is decided.
        if !rounds.is_empty() {
            let mut evaluation = evaluate(&samples, &policy, &floors);
            evaluation.hold_given_up(&mut given_up);
            if runner.can_narrow() {
                // Later rounds run only what is undecided; decided rows keep their interval.
                let undecided = evaluation.undecided_benchmarks();
                let narrowed = (!undecided.is_empty()
                    && undecided.len() < evaluation.benchmark_count())
                .then_some(undecided.as_slice());
                runner.run_only(narrowed);
            }
            display.update(rounds.len() as u64, &evaluation);
            if args.rounds.is_some_and(|n| rounds.len() >= n as usize) {
                break (evaluation, StopReason::FixedRounds);
            }
            let decided = match &until {
                Some(named) => {
                    if !evaluation
                        .results
                        .iter()
                        .any(|r| named.first_match(&r.name).is_some())
                    {
                        return Err(CliError::Usage(format!(
                            "--until {} matches no benchmark; they are: {}",
                            args.until.join(", "),
                            benchmark_names(&evaluation)
                        )));
                    }
                    evaluation.named_decided(|name| named.first_match(name).is_some())
                }
                None => evaluation.all_decided(),
            };
            if args.rounds.is_none() && decided {
                break (evaluation, StopReason::AllDecided);
            }
            // A gated regression is the gate's answer, as on a runner; `--until` waits for its rows.
            if args.rounds.is_none() && until.is_none() && evaluation.has_regression(fail_on) {
                break (evaluation, StopReason::Regression);
            }
            if rounds.len() >= limit as usize {
                break (evaluation, StopReason::MaxRounds);
            }
            if args.rounds.is_none()
                && rounds.len() >= 2
                && budget.is_some_and(|b| measuring.elapsed() >= b)
            {
                break (evaluation, StopReason::Budget);
            }
        }
        if !warmed {
            display.phase("warming up");
            runner.warm_up(warmup)?;
            warmed = true;
        }
        let started = std::time::Instant::now();
        let round = runner.run_round()?;
        round_secs.push(started.elapsed().as_secs_f64());
        samples.push_round(&round.base, &round.head, round.base_first());
        rounds.push(round);
    };
    let seconds_per_round = benchgate_stats::paired::median(&round_secs)
        .or_else(|| resumed.as_ref().and_then(|r| r.seconds_per_round));
    let forecast = seconds_per_round.and_then(|pace| forecast(&evaluation, pace));
    let run_length = run_length_advice(
        format,
        &rounds,
        &evaluation,
        config.measure_secs.zip(seconds_per_round),
    );
    let elapsed_seconds = display.elapsed().as_secs_f64();
    display.finish();

    let session = SessionRecord {
        machine: fingerprint::current(),
        base,
        head,
        revisions,
        base_note,
        bench_from_head: from_head,
        format: format.to_string(),
        suite: suite_name,
        schedule,
        warmup_rounds: warmup,
        quieting,
        env: env.names(),
        instructions_counted: runner.counts_instructions(),
        stop,
        resumed_rounds: resumed.as_ref().map_or(0, |r| r.rounds.len()),
        seconds_per_round,
        forecast,
        run_length,
        elapsed_seconds,
        planned_n_star: policy.planned.clone(),
        aa_rounds,
        rounds,
    };
    if let Some(path) = &args.record {
        let json = serde_json::to_string_pretty(&session).expect("session record serialises");
        std::fs::write(path, json)
            .map_err(|e| CliError::Input(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(Compared::Measured(Box::new(CompareOutcome {
        evaluation,
        session,
        fail_on,
        runner: config,
    })))
}

/// What a session ended with: rounds measured, or builds that left nothing to measure.
#[derive(Debug)]
pub enum Compared {
    Measured(Box<CompareOutcome>),
    IdenticalBuild(IdenticalBuildOutcome),
}

impl Compared {
    /// The measured outcome; `None` for an identical build.
    pub fn measured(self) -> Option<CompareOutcome> {
        match self {
            Compared::Measured(outcome) => Some(*outcome),
            Compared::IdenticalBuild(_) => None,
        }
    }
}

/// Both commits built to byte-identical `artifacts`: the answer is exact, and no round ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdenticalBuildOutcome {
    pub base: String,
    pub head: String,
    pub build: benchgate_api::agent::IdenticalBuild,
}

impl IdenticalBuildOutcome {
    /// What `compare` prints instead of a table.
    pub fn describe(&self) -> String {
        use benchgate_stats::words::short_sha;
        format!(
            "base {} and head {}: {}\n",
            short_sha(&self.base),
            short_sha(&self.head),
            self.build.describe()
        )
    }
}

/// The suite's `artifacts` compared between the built work trees (emptied of matches before
/// each build); `None` when it names none, or the sides differ (said on stderr, with how many
/// files differ).
fn identical_build(
    globs: &PathGlobs,
    dirs: &[std::path::PathBuf],
) -> Result<Option<benchgate_api::agent::IdenticalBuild>, CliError> {
    use crate::artifacts;
    if globs.patterns().is_empty() {
        return Ok(None);
    }
    let read = |dir: &std::path::PathBuf| {
        artifacts::digest(dir, globs).map_err(|e| CliError::Input(e.to_string()))
    };
    let (base, head) = (read(&dirs[0])?, read(&dirs[1])?);
    let same = artifacts::identical(&base, &head);
    if same.is_none() {
        eprintln!(
            "artifacts: {}; measuring",
            artifacts::difference(&base, &head)
        );
    }
    Ok(same)
}

/// Rounds a session runs at most with neither `--max-rounds` nor a suite.
pub const DEFAULT_MAX_ROUNDS: u32 = 50;

/// "An answer needs ~N more rounds, ~M min at this session's S s a round", for the gated
/// undecided row that needs the most; `None` when no gated row waits on a forecast.
fn forecast(eval: &Evaluation, pace: f64) -> Option<String> {
    use benchgate_stats::words::elapsed;
    let needed = eval
        .results
        .iter()
        .filter(|r| r.gated && r.verdict == benchgate_api::VerdictKind::NoResultYet)
        .filter_map(|r| r.rounds_needed)
        .max()?;
    Some(format!(
        "an answer needs ~{needed} more {}, ~{} at this session's {} a round (--max-rounds or \
         --budget allow more; --resume continues a --record file)",
        if needed == 1 { "round" } else { "rounds" },
        elapsed(needed as f64 * pace),
        elapsed(pace)
    ))
}

/// "run length, from NAME's runs: a run's own error is 2% of its variance …", for the gated
/// row whose runs' own errors weigh most (the one shorter runs would slow most); `None` when
/// the format states no bounds of known confidence or too few rounds ran.
fn run_length_advice(
    format: crate::formats::Format,
    rounds: &[Round],
    eval: &Evaluation,
    measured: Option<(f64, f64)>,
) -> Option<String> {
    let confidence = crate::formats::bounds_confidence(format)?;
    let sides: Vec<(&[benchgate_api::Measurement], &[benchgate_api::Measurement])> = rounds
        .iter()
        .map(|r| (r.base.as_slice(), r.head.as_slice()))
        .collect();
    let splits = crate::samples::run_splits(&sides, confidence);
    let (key, split) = splits
        .iter()
        .filter(|(key, _)| {
            eval.results
                .iter()
                .any(|r| r.gated && r.name == key.benchmark && r.metric == key.metric)
        })
        .max_by(|a, b| a.1.within_share().total_cmp(&b.1.within_share()))?;
    let mut advice = format!(
        "run length, from {}'s {} rounds: {}",
        key.benchmark,
        split.pairs,
        benchgate_stats::words::run_length(split)
    );
    // With `{measure_secs}` set, the length that answers soonest: each run costs its fixed part
    // (start-up, warm-up, analysis) plus the measuring of every benchmark.
    if let Some((measure, per_round)) = measured {
        let benchmarks = eval.benchmark_count();
        let fixed = per_round / 2.0 - benchmarks as f64 * measure;
        if let Some(best) = split.best_measure_secs(measure, fixed, benchmarks) {
            let best = best.clamp(*MEASURE_SECS.start(), *MEASURE_SECS.end());
            advice.push_str(&format!(
                "; the run length that answers soonest here is ~{} s per benchmark (now {} s: \
                 `measure` in the suite, or --measure-secs)",
                measure_text(best),
                measure_text(measure)
            ));
        }
    }
    Some(advice)
}

/// The `--bench-from-head` globs, else the suite's `bench_from_head`.
fn bench_from_head_globs(args: &CompareArgs, suite: Option<&Suite>) -> Result<PathGlobs, CliError> {
    let patterns = match suite {
        Some(s) if args.bench_from_head.is_empty() => s.config.benchmark.bench_from_head.clone(),
        _ => args.bench_from_head.clone(),
    };
    PathGlobs::try_from(patterns).map_err(|e| CliError::Usage(format!("--bench-from-head: {e}")))
}

type Revisions = Option<(Repository, [String; 2])>;

/// `--until` globs, matched as the suite's rules match names (`*` also crosses `/`).
fn until_globs(patterns: &[String]) -> Result<Option<RuleSet>, CliError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for p in patterns {
        compile_pattern(p).map_err(|e| CliError::Usage(format!("--until {p:?}: {e}")))?;
    }
    let rules: Vec<BenchmarkRule> = patterns
        .iter()
        .map(|p| BenchmarkRule::matching(p))
        .collect();
    Ok(Some(RuleSet::new(&rules)))
}

/// Says which base was measured when a `--base-rev` branch moved on since head branched.
fn merge_base_note(base_rev: &str, tip: &str, point: &worktree::BranchPoint) -> String {
    use benchgate_stats::words::{count, short_sha};
    format!(
        "base: the merge base {} of {base_rev} and head; {base_rev} (at {}) has {} since, not \
         measured (--base-tip measures the tip)",
        short_sha(&point.merge_base),
        short_sha(tip),
        count(point.base_ahead_by as usize, "commit")
    )
}

/// The two commands, and the repository and revisions in the revisions form; with a suite,
/// its run command in both worktrees.
fn commands(
    args: &CompareArgs,
    suite: Option<&Suite>,
) -> Result<(BenchCommand, BenchCommand, Revisions), CliError> {
    let parse = |line: &str| {
        if args.shell {
            BenchCommand::shell(line)
        } else {
            BenchCommand::from_words(line)
        }
        .map_err(|e| CliError::Usage(e.to_string()))
    };
    match (&args.base, &args.head, &args.base_rev, &args.head_rev) {
        (Some(base), Some(head), None, None) => {
            if !args.run.is_empty() {
                return Err(CliError::Usage(
                    "a command after `--` goes with --base-rev/--head-rev, not --base/--head"
                        .into(),
                ));
            }
            Ok((parse(base)?, parse(head)?, None))
        }
        (None, None, Some(base_rev), Some(head_rev)) => {
            if suite.is_none() && args.run.is_empty() {
                return Err(CliError::Usage(
                    "--base-rev/--head-rev need the benchmark command after `--`".into(),
                ));
            }
            let run = match suite {
                Some(s) => s.plan.run.clone(),
                None => if args.shell {
                    BenchCommand::shell(&args.run.join(" "))
                } else {
                    BenchCommand::from_argv(args.run.clone())
                }
                .map_err(|e| CliError::Usage(e.to_string()))?,
            };
            let cwd = match &args.repo {
                Some(dir) => dir.clone(),
                None => std::env::current_dir()
                    .map_err(|e| CliError::Usage(format!("no current directory: {e}")))?,
            };
            let repo = Repository::discover(&cwd)?;
            Ok((
                run.clone(),
                run,
                Some((repo, [base_rev.clone(), head_rev.clone()])),
            ))
        }
        _ => Err(CliError::Usage(
            "give either --base CMD --head CMD, or --base-rev REV --head-rev REV -- CMD".into(),
        )),
    }
}

fn schedule(args: &CompareArgs) -> Result<Schedule, CliError> {
    match (args.schedule, args.seed) {
        (None | Some(ScheduleKind::Abba), None) => Ok(Schedule::Abba),
        (Some(ScheduleKind::Abba), Some(_)) => Err(CliError::Usage(
            "--seed applies to --schedule random, not abba".into(),
        )),
        (None | Some(ScheduleKind::Random), Some(seed)) => Ok(Schedule::Random { seed }),
        (Some(ScheduleKind::Random), None) => Ok(Schedule::random_unseeded()),
    }
}

/// The benchmarks of an evaluation, each once, for an error message.
fn benchmark_names(eval: &Evaluation) -> String {
    let mut names: Vec<&str> = eval.results.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    names.join(", ")
}
