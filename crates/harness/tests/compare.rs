//! `benchgate compare` end to end with real processes and a real git repository. Assertions are
//! about verdicts and intervals (what a user reads), never about how long anything took.

use std::path::Path;
use std::process::Command;

use benchgate_api::{AnalysisReport, VerdictKind};
use benchgate_harness::cli::compare::CompareOutcome;
use benchgate_harness::cli::progress::Display;
use benchgate_harness::cli::{CliError, CompareArgs, format_report};
use benchgate_harness::formats::command::WALL_TIME;
use benchgate_harness::schedule::Schedule;
use clap::Parser;

use crate::measuring;

/// A session that measured (none of these suites names `artifacts`).
fn compare(
    args: &CompareArgs,
    display: Display,
    plan: Option<&benchgate_api::agent::ComparisonConfig>,
) -> Result<CompareOutcome, CliError> {
    benchgate_harness::cli::compare::compare(args, display, plan)
        .map(|c| c.measured().expect("measured"))
}

fn args(extra: &[&str]) -> CompareArgs {
    let argv = ["compare", "--no-progress"].iter().chain(extra);
    CompareArgs::try_parse_from(argv).unwrap()
}

fn wall(outcome: &CompareOutcome) -> benchgate_api::BenchmarkResult {
    let report = outcome.evaluation.report();
    report
        .benchmarks
        .into_iter()
        .find(|b| b.metric == WALL_TIME)
        .expect("a wall_time row")
}

#[test]
fn a_ten_percent_slower_sleep_is_reported_slower_with_ten_percent_inside() {
    let _turn = measuring();
    let outcome = compare(
        &args(&["--base", "sleep 0.02", "--head", "sleep 0.022"]),
        Display::Hidden,
        None,
    )
    .unwrap();
    let row = wall(&outcome);
    assert_eq!(row.verdict, VerdictKind::Slower, "{row:?}");
    let [lo, hi] = row.interval_pct;
    assert!(lo.unwrap() > 0.0 && lo.unwrap() <= 10.0, "{row:?}");
    assert!(hi.is_none_or(|hi| hi >= 10.0), "{row:?}");
    assert_eq!(outcome.session.warmup_rounds, 1);
}

#[test]
fn the_same_sleep_against_itself_claims_no_change_beyond_chance_in_20_invocations() {
    let _turn = measuring();
    // Each invocation may claim a change with probability at most alpha = 5% (the interval is
    // valid, not infallible); measured here: 0 claims in 240 invocations (docs/performance.md).
    // So one claim in 20 is chance we tolerate, two would mean a biased tool.
    let mut claims = Vec::new();
    for i in 0..20 {
        let outcome = compare(
            &args(&[
                "--base",
                "sleep 0.02",
                "--head",
                "sleep 0.02",
                "--max-rounds",
                "20",
            ]),
            Display::Hidden,
            None,
        )
        .unwrap();
        let row = wall(&outcome);
        if matches!(row.verdict, VerdictKind::Slower | VerdictKind::Faster) {
            claims.push(format!("invocation {i}: {row:?}"));
        }
    }
    assert!(
        claims.len() <= 1,
        "A/A claimed a change:\n{}",
        claims.join("\n")
    );
}

#[test]
fn a_failing_command_is_a_measurement_error_with_its_stderr() {
    let err = compare(
        &args(&[
            "--shell",
            "--base",
            "true",
            "--head",
            "echo broken-build >&2; exit 7",
        ]),
        Display::Hidden,
        None,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, CliError::Measurement(_)), "{text}");
    assert!(
        text.contains("exit code 7") && text.contains("broken-build"),
        "{text}"
    );
}

#[test]
fn only_a_format_that_reads_stdout_gets_it_piped() {
    // The shell's own fd 1 (a command substitution has its own), shown through the stderr tail.
    let stdout_of = |format: &str| {
        let script = r#"echo "stdout is $(readlink /proc/$$/fd/1)" >&2; exit 3"#;
        let argv = [
            "--shell", "--format", format, "--base", script, "--head", script,
        ];
        compare(&args(&argv), Display::Hidden, None)
            .unwrap_err()
            .to_string()
    };
    let command = stdout_of("command");
    assert!(command.contains("stdout is /dev/null"), "{command}");
    let raw = stdout_of("raw");
    assert!(raw.contains("stdout is pipe:["), "{raw}");
}

#[test]
fn fixed_rounds_random_schedule_and_json_report() {
    let _turn = measuring();
    let outcome = compare(
        &args(&[
            "--base", "true", "--head", "true", "--rounds", "6", "--seed", "42", "--warmup", "2",
        ]),
        Display::Hidden,
        None,
    )
    .unwrap();
    assert_eq!(outcome.session.rounds.len(), 6);
    assert_eq!(outcome.session.schedule, Schedule::Random { seed: 42 });
    assert_eq!(outcome.session.warmup_rounds, 2);
    let output = args(&["--base", "x", "--head", "y", "--json"]).output;
    let json = format_report(&outcome.evaluation, &output, &[]);
    let report: AnalysisReport = serde_json::from_str(&json).unwrap();
    assert_eq!(
        report.benchmarks.iter().filter(|b| b.n == 6).count(),
        report.benchmarks.len()
    );
}

#[test]
fn usage_errors_are_named() {
    let err = compare(
        &args(&["--base", "echo 'unbalanced", "--head", "true"]),
        Display::Hidden,
        None,
    )
    .unwrap_err();
    assert!(matches!(err, CliError::Usage(_)), "{err}");
    assert!(CompareArgs::try_parse_from(["compare", "--base", "true"]).is_err());
    let help = CompareArgs::try_parse_from(["compare", "--help"])
        .unwrap_err()
        .to_string();
    assert!(help.contains("1  a regression"), "{help}");
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn two_revisions_are_built_and_compared_in_kept_worktrees() {
    let _turn = measuring();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(dir.join("bench.sh"), "sleep 0.02\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "run.sh\nbuilds\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "base"]);
    let base_sha = git(dir, &["rev-parse", "HEAD"]);
    std::fs::write(dir.join("bench.sh"), "sleep 0.03\n").unwrap();
    git(dir, &["commit", "--quiet", "-am", "head: slower"]);

    // The "build" copies the script and counts builds, so we can see the worktree was reused.
    let build = "cp bench.sh run.sh && echo built >> builds";
    let session = |rounds: &str| {
        let repo_arg = dir.to_str().unwrap();
        compare(
            &args(&[
                "--repo",
                repo_arg,
                "--base-rev",
                "main~1",
                "--head-rev",
                "main",
                "--build",
                build,
                "--rounds",
                rounds,
                "--",
                "sh",
                "run.sh",
            ]),
            Display::Hidden,
            None,
        )
        .unwrap()
    };
    let first = session("8");
    assert_eq!(
        wall(&first).verdict,
        VerdictKind::Slower,
        "{:?}",
        wall(&first)
    );
    assert_eq!(first.session.revisions.as_ref().unwrap()[0], base_sha);

    session("2");
    let base_tree = dir.join(".git/benchgate-worktrees/base");
    assert_eq!(git(&base_tree, &["rev-parse", "HEAD"]), base_sha);
    let builds = std::fs::read_to_string(base_tree.join("builds")).unwrap();
    assert_eq!(
        builds.lines().count(),
        2,
        "second build ran in the same worktree"
    );
}

/// `--base-rev main` after main moved on since the head branched: the merge base is measured
/// (main's newer, slower commit is not counted as head's change) and the report says so;
/// `--base-tip` measures the tip as named.
#[test]
fn a_base_branch_that_moved_on_is_measured_at_the_merge_base() {
    let _turn = measuring();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(dir.join("bench.sh"), "sleep 0.02\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "c0"]);
    let c0 = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["checkout", "--quiet", "-b", "feature"]);
    std::fs::write(dir.join("NOTES"), "notes only\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "notes"]);
    let feature = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["checkout", "--quiet", "main"]);
    std::fs::write(dir.join("bench.sh"), "sleep 0.04\n").unwrap();
    git(dir, &["commit", "--quiet", "-am", "main: slower"]);
    let tip = git(dir, &["rev-parse", "HEAD"]);

    let session = |extra: &[&str], rounds: &str| {
        let mut words = vec![
            "--repo",
            dir.to_str().unwrap(),
            "--base-rev",
            "main",
            "--head-rev",
            "feature",
            "--rounds",
            rounds,
        ];
        words.extend_from_slice(extra);
        words.extend_from_slice(&["--", "sh", "bench.sh"]);
        compare(&args(&words), Display::Hidden, None).unwrap()
    };
    let merge_base = session(&[], "6");
    assert_eq!(
        merge_base.session.revisions,
        Some([c0.clone(), feature.clone()])
    );
    let note = merge_base.session.base_note.clone().unwrap();
    assert_eq!(
        note,
        format!(
            "base: the merge base {} of main and head; main (at {}) has 1 commit since, not \
             measured (--base-tip measures the tip)",
            &c0[..7],
            &tip[..7]
        )
    );
    assert_ne!(
        wall(&merge_base).verdict,
        VerdictKind::Faster,
        "{:?}",
        wall(&merge_base)
    );

    let at_tip = session(&["--base-tip"], "2");
    assert_eq!(at_tip.session.revisions, Some([tip, feature.clone()]));
    assert_eq!(at_tip.session.base_note, None);
    // A sha names a commit, not a branch: measured as given.
    let by_sha = compare(
        &args(&[
            "--repo",
            dir.to_str().unwrap(),
            "--base-rev",
            &c0,
            "--head-rev",
            &feature,
            "--rounds",
            "2",
            "--",
            "sh",
            "bench.sh",
        ]),
        Display::Hidden,
        None,
    )
    .unwrap();
    assert_eq!(by_sha.session.base_note, None);
}

/// `--format` in both commands' help comes from the one list of formats, each with its summary.
#[test]
fn format_help_lists_every_format_from_the_one_list() {
    use benchgate_harness::cli::AnalyzeArgs;
    use benchgate_harness::formats::Format;
    use clap::CommandFactory;
    for mut command in [CompareArgs::command(), AnalyzeArgs::command()] {
        let help = command.render_long_help().to_string();
        for f in Format::ALL {
            let listed = help.lines().any(|l| {
                let l = l.trim();
                l.starts_with(&format!("- {}:", f.as_str())) && l.ends_with(f.summary())
            });
            assert!(listed, "{} --help lacks {f}:\n{help}", command.get_name());
        }
    }
    // A former name still parses, to the format it became.
    let args = CompareArgs::try_parse_from([
        "compare",
        "--base",
        "a",
        "--head",
        "b",
        "--format",
        "iai-callgrind",
    ])
    .unwrap();
    assert_eq!(args.format, Format::Gungraun);
}

/// `--aa-rounds` measures an A/A session of the base first and the margin uses its floor; a
/// recorded session passed with `--aa-from` is pooled with the new one, as a runner pools its
/// calibrations, and a record without one is refused by name.
#[test]
fn a_local_aa_session_sets_the_floor_and_recorded_ones_are_pooled() {
    let _turn = measuring();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("first.json");
    let margin_line = |outcome: &CompareOutcome| {
        benchgate_harness::cli::render::margin_note(&outcome.evaluation).unwrap()
    };
    let base = [
        "--base",
        "sleep 0.005",
        "--head",
        "sleep 0.005",
        "--rounds",
        "3",
    ];
    let first = compare(
        &args(
            &[
                &base[..],
                &["--aa-rounds", "4", "--record", record.to_str().unwrap()],
            ]
            .concat(),
        ),
        Display::Hidden,
        None,
    )
    .unwrap();
    assert_eq!(first.session.aa_rounds.len(), 4);
    // n* is planned from that floor per benchmark, as the service plans a comparison.
    let planned = &first.session.planned_n_star;
    let wall = planned
        .get("command")
        .copied()
        .expect("the wall time plans n*");
    let floor = first.evaluation.rows.iter().find_map(|r| {
        let a = r.analysis.as_ref().ok()?;
        (r.key.metric == "wall_time").then_some(a.floor?)
    });
    let floor = floor.expect("the gated row has the floor");
    let target = floor.margin(0.01f64.ln_1p());
    assert_eq!(
        benchgate_stats::plan_n_star(0.05, floor.s_aa, target, 1000).unwrap(),
        Some(wall).filter(|&n| n < 1000)
    );
    assert!(
        first
            .session
            .context()
            .iter()
            .any(|l| l.starts_with(&format!(
                "n* planned from the A/A floor, as a runner plans: command {wall}"
            ))),
        "{:?}",
        first.session.context()
    );
    assert!(
        margin_line(&first).contains("from 1 session(s), 4 pairs"),
        "{}",
        margin_line(&first)
    );
    let second = compare(
        &args(
            &[
                &base[..],
                &["--aa-rounds", "3", "--aa-from", record.to_str().unwrap()],
            ]
            .concat(),
        ),
        Display::Hidden,
        None,
    )
    .unwrap();
    assert!(
        margin_line(&second).contains("from 2 session(s), 7 pairs"),
        "{}",
        margin_line(&second)
    );

    let plain = dir.path().join("plain.json");
    compare(
        &args(&[&base[..], &["--record", plain.to_str().unwrap()]].concat()),
        Display::Hidden,
        None,
    )
    .unwrap();
    let err = compare(
        &args(&[&base[..], &["--aa-from", plain.to_str().unwrap()]].concat()),
        Display::Hidden,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("plain.json: holds no A/A session"), "{err}");
}
