//! `benchgate compare`: run base and head interleaved until every benchmark has a verdict (or a
//! round limit), then report. Two forms: two commands, or two revisions of the current git
//! repository built and run in their own worktrees.

mod counting;
mod outcome;
mod run_length;
mod session;

use outcome::identical_build;
pub use outcome::{CompareOutcome, Compared, IdenticalBuildOutcome, IgnoredChange, ignored_change};
pub use session::{BenchFromHead, SessionRecord, StopReason};
use session::{ResumeCheck, aa_floors, recorded_aa, recorded_session, resume_mismatch};

use std::time::Duration;

use benchgate_api::Side;

use benchgate_stats::NoiseFloor;

use crate::cli::CliError;
use crate::cli::args::{CompareArgs, ScheduleKind};
use crate::cli::progress::{Display, Progress};
use crate::command::BenchCommand;
use crate::env::ScrubbedEnv;
use crate::evaluate::{Evaluation, evaluate};
use crate::fingerprint::{self};
use crate::plan::{SuitePlan, suite_plan};
use crate::quieting::{Quieting, parse_cpu_list};
use crate::rounds::{RoundRunner, RunnerConfig};
use crate::samples::PairedSamples;
use crate::schedule::Schedule;
use crate::worktree::{self, HeadBenchmarks, Repository};
use benchgate_api::agent::ComparisonConfig;
use benchgate_api::paths::PathGlobs;
use benchgate_api::rules::compile_pattern;
use benchgate_api::{BenchmarkRule, RuleSet};

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
        if args.policy.rare_slow_runs.is_none() {
            policy.rare_slow_runs = s.config.gate.rare_slow_runs;
        }
        if args.policy.gate_on.is_none() {
            policy.gate_on = s.config.gate.gate_on;
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
        measure_secs: args
            .measure_secs
            .or(suite.as_ref().and_then(|s| s.config.benchmark.measure_secs)),
        ..RunnerConfig::default()
    };
    // As CI runs the suite: its `rounds` bound a session (at least the tail guard's, so a
    // pass can be reached, as the service plans) and its `budget` its measuring time.
    let guard = policy.rare_slow_runs.map_or(0, |share| {
        benchgate_api::agent::guard_rounds(share, policy.alpha)
    });
    let limit = args
        .rounds
        .or(args.max_rounds)
        .or(suite.as_ref().map(|s| s.config.benchmark.rounds.max(guard)))
        .unwrap_or(DEFAULT_MAX_ROUNDS.max(guard));
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
            let taken = HeadBenchmarks::plan(
                &crate::git::Git::discover(&repo.toplevel),
                &shas[0],
                &shas[1],
                &bench_from_head,
            )?;
            // An A/A of one commit: both sides run one build, as a runner's calibration does.
            let one_build = shas[0] == shas[1] && taken.is_empty();
            let mut dirs: Vec<std::path::PathBuf> = Vec::new();
            for (side, sha) in [(Side::Base, &shas[0]), (Side::Head, &shas[1])] {
                if side == Side::Head && one_build {
                    display.phase(&format!(
                        "head is base's commit {}: both sides run one build",
                        benchgate_stats::words::short_sha(sha)
                    ));
                    dirs.push(dirs[0].clone());
                    continue;
                }
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
                    taken.apply(&crate::git::Git::discover(&dir), &shas[1])?;
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
                && !one_build
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
    let counting = counting::count_plan(args, suite.as_ref().map(|s| &s.config), format)?;
    let mut counted = resumed
        .as_ref()
        .map(|r| r.counted.clone())
        .unwrap_or_default();
    let mut runner = RoundRunner::new(base.clone(), head.clone(), config.clone(), schedule);
    let mut samples = PairedSamples::default();
    let mut rounds = Vec::new();
    if let Some(recorded) = resumed.as_ref().filter(|r| !r.rounds.is_empty()) {
        display.phase(&format!(
            "continuing {} recorded rounds",
            recorded.rounds.len()
        ));
        for round in recorded.rounds.iter().chain(&counted) {
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
        if let Some(plan) = counting.as_ref().filter(|_| counted.is_empty()) {
            // After the first timed round: its output names the benchmarks to count.
            display.phase(&format!(
                "counting instructions ({}): {} runs per side",
                plan.counter.name(),
                benchgate_api::counts::COUNTED_RUNS
            ));
            counted = runner.count_runs(
                plan,
                &counting::round_benchmarks(&round),
                benchgate_api::counts::MAX_COUNTED_RUNS,
            )?;
            for c in &counted {
                samples.push_round(&c.base, &c.head, c.base_first());
            }
        }
        rounds.push(round);
    };
    let seconds_per_round = benchgate_stats::paired::median(&round_secs)
        .or_else(|| resumed.as_ref().and_then(|r| r.seconds_per_round));
    let forecast = seconds_per_round.and_then(|pace| forecast(&evaluation, pace));
    let run_length = run_length::run_length_advice(
        format,
        &rounds,
        &evaluation,
        seconds_per_round,
        config.measure_secs,
        &head,
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
        counted_by: counting.as_ref().map(|p| p.counter.name().to_owned()),
        counted,
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
