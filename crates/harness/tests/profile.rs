//! Profiling real processes with perf: a C program built here with gcc (the profile crate's
//! fixture workload), profiled base against head, through the sandbox, cut when it recurses
//! deep, and `benchgate compare --profile` on it. The probe is tested with perf missing or
//! broken.
//!
//! Without a working perf the tests that need it skip with the reason printed; in CI (`CI` set)
//! they fail.

use std::path::Path;
use std::process::Command;

use benchgate_harness::cli::CompareArgs;
use benchgate_harness::cli::compare::compare;
use benchgate_harness::cli::profile::{ProfileOutcome, profile_comparison, render};
use benchgate_harness::cli::progress::Display;
use benchgate_harness::command::BenchCommand;
use benchgate_harness::profile::{
    ProfileRunError, Profiler, probe, probe_on_path, profile_side, profiler,
};
use benchgate_harness::rounds::RunnerConfig;
use benchgate_harness::sandbox::Sandbox;
use benchgate_profile::{DEEPER_FRAMES, Limits, changes};
use clap::Parser;

/// The workload the profile crate's fixtures were recorded from: `base_work()` always,
/// `slow_path()` too with `slow` or `BENCHGATE_SLOW_PATH`, `recurse()` with `deep N`.
const WORKLOAD: &str = include_str!("../../profile/tests/fixtures/workload.c");

/// Profiling tests take the measuring turn: perf and valgrind load both cores, which a timing
/// test beside them would measure; one also checks that no perf data file is left behind.
fn profiling() -> std::sync::MutexGuard<'static, ()> {
    crate::measuring()
}

/// The perf event to sample, or `None` with the reason printed (a failure in CI).
fn perf_event() -> Option<String> {
    match profiler() {
        Profiler::Perf { event } => Some(event.clone()),
        Profiler::Unavailable { reason } if std::env::var_os("CI").is_some() => {
            panic!("perf must work in CI (.ci/run installs linux-perf): {reason}")
        }
        Profiler::Unavailable { reason } => {
            eprintln!("skipped: {reason}");
            None
        }
    }
}

/// A directory holding the workload built as `./workload` (outside /tmp, which the sandbox
/// replaces).
fn built_workload() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(dir.path().join("workload.c"), WORKLOAD).unwrap();
    let status = Command::new("gcc")
        .args([
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            "-o",
            "workload",
            "workload.c",
        ])
        .current_dir(dir.path())
        .status()
        .expect("gcc is installed");
    assert!(status.success(), "gcc failed");
    dir
}

fn workload(dir: &Path, args: &[&str]) -> BenchCommand {
    let argv = std::iter::once("./workload")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    BenchCommand::from_argv(argv).unwrap().in_dir(dir)
}

/// perf data files this process left in the temp dir.
fn leftover_perf_data() -> Vec<String> {
    let prefix = format!("benchgate-record-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with(&prefix))
        .collect()
}

#[test]
fn a_head_that_also_runs_slow_path_profiles_with_slow_path_first() {
    let _turn = profiling();
    let Some(event) = perf_event() else { return };
    let dir = built_workload();
    let config = RunnerConfig::default();
    let limits = Limits::default();
    let base = profile_side(&workload(dir.path(), &[]), &config, &event, 2, limits).unwrap();
    let head = profile_side(&workload(dir.path(), &["slow"]), &config, &event, 2, limits).unwrap();
    assert_eq!((base.runs, head.runs), (2, 2));
    let ranked = changes(&base.folded, &head.folded);
    assert_eq!(ranked[0].function, "slow_path", "{:#?}", &ranked[..5]);
    assert!(ranked[0].self_pp > 10.0, "{:?}", ranked[0]);
    assert!(
        ranked.iter().any(|c| c.function == "base_work"),
        "{ranked:#?}"
    );
    assert!(
        leftover_perf_data().is_empty(),
        "{:?}",
        leftover_perf_data()
    );
}

#[test]
fn profiling_goes_through_the_sandbox_with_the_sessions_environment() {
    let _turn = profiling();
    let Some(event) = perf_event() else { return };
    let sandbox = match Sandbox::from_path().and_then(|s| s.probe().map(|()| s)) {
        Ok(sandbox) => sandbox,
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("bubblewrap must work in CI (.ci/run installs it): {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let dir = built_workload();
    let mut config = RunnerConfig {
        sandbox: Some(sandbox),
        ..RunnerConfig::default()
    };
    let base = profile_side(
        &workload(dir.path(), &[]),
        &config,
        &event,
        1,
        Limits::default(),
    )
    .unwrap();
    // The variable reaches the program only through the session's environment.
    config.env.set("BENCHGATE_SLOW_PATH", "1".to_owned());
    let head = profile_side(
        &workload(dir.path(), &[]),
        &config,
        &event,
        1,
        Limits::default(),
    )
    .unwrap();
    let ranked = changes(&base.folded, &head.folded);
    assert_eq!(ranked[0].function, "slow_path", "{:#?}", &ranked[..5]);
    assert!(ranked[0].self_pp > 10.0, "{:?}", ranked[0]);
    // bwrap ran the program as pid 1 of its namespace; perf followed it in.
    let text = head.folded.to_text();
    assert!(text.contains(";main;slow_path"), "{text}");
}

#[test]
fn a_deep_recursion_is_cut_to_the_limits() {
    let _turn = profiling();
    let Some(event) = perf_event() else { return };
    let dir = built_workload();
    let limits = Limits {
        max_bytes: 4096,
        max_depth: 48,
    };
    let deep = profile_side(
        &workload(dir.path(), &["deep", "300"]),
        &RunnerConfig::default(),
        &event,
        1,
        limits,
    )
    .unwrap();
    assert!(deep.dropped_frames);
    assert!(deep.folded.to_text().len() <= limits.max_bytes);
    assert!(
        deep.folded
            .stacks()
            .all(|(stack, _)| stack.split(';').count() <= limits.max_depth)
    );
    assert!(
        deep.folded
            .stacks()
            .any(|(stack, _)| stack.contains(";recurse;recurse;") && stack.ends_with(DEEPER_FRAMES))
    );
}

#[test]
fn a_failing_command_is_a_run_failure_with_its_stderr() {
    let _turn = profiling();
    let Some(event) = perf_event() else { return };
    let command = BenchCommand::shell("echo broken input >&2; exit 3").unwrap();
    let err = profile_side(
        &command,
        &RunnerConfig::default(),
        &event,
        1,
        Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ProfileRunError::RunFailed { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("exit code 3") && message.contains("broken input"),
        "{message}"
    );
    assert!(
        leftover_perf_data().is_empty(),
        "{:?}",
        leftover_perf_data()
    );
}

#[test]
fn without_perf_the_profiler_is_unavailable_with_a_one_line_reason() {
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        probe_on_path(empty.path().as_os_str()),
        Profiler::Unavailable {
            reason: "perf is not on PATH (Debian: apt-get install linux-perf)".into()
        }
    );
    match probe(&empty.path().join("perf")) {
        Profiler::Unavailable { reason } => {
            assert!(reason.starts_with("cannot run "), "{reason}");
            assert!(!reason.contains('\n'), "{reason}");
        }
        found => panic!("{found:?}"),
    }
}

#[test]
fn a_perf_that_cannot_record_is_unavailable_with_its_own_words() {
    use std::os::unix::fs::PermissionsExt;
    // Debian's /usr/bin/perf is a wrapper that fails this way when the kernel's perf is missing.
    let dir = tempfile::tempdir().unwrap();
    let perf = dir.path().join("perf");
    std::fs::write(
        &perf,
        "#!/bin/sh\necho 'some detail' >&2\necho 'perf: not found for kernel 6.99' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&perf, std::fs::Permissions::from_mode(0o755)).unwrap();
    let paranoid: Option<i32> = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok());
    let expected =
        benchgate_harness::profile::unavailable_reason(paranoid, "perf: not found for kernel 6.99");
    assert_eq!(
        probe_on_path(dir.path().as_os_str()),
        Profiler::Unavailable { reason: expected }
    );
}

#[test]
fn compare_with_profile_prints_the_top_functions_and_writes_the_flame_graph() {
    let _turn = profiling();
    let Some(event) = perf_event() else { return };
    let dir = built_workload();
    let svg = dir.path().join("why.svg");
    let svg_arg = svg.to_str().unwrap();
    let program = dir.path().join("workload");
    let base = program.to_str().unwrap().to_owned();
    let head = format!("{base} slow");
    let args = CompareArgs::try_parse_from([
        "compare",
        "--no-progress",
        "--base",
        &base,
        "--head",
        &head,
        "--rounds",
        "2",
        "--warmup",
        "0",
        "--profile",
        "--profile-runs",
        "1",
        "--profile-svg",
        svg_arg,
    ])
    .unwrap();
    assert!(args.profile.profile);
    let outcome = compare(&args, Display::Hidden, None)
        .unwrap()
        .measured()
        .unwrap();
    let profiled = profile_comparison(&outcome, &args.profile, profiler()).unwrap();
    let text = render(&profiled);
    let ProfileOutcome::Profiled(report) = profiled else {
        panic!("{text}")
    };
    assert_eq!(report.event, event);
    assert_eq!(report.runs, 1);
    let first = text.lines().nth(2).unwrap();
    assert!(
        first.trim_start().starts_with('+') && first.ends_with("  slow_path"),
        "{text}"
    );
    assert!(
        text.contains(&format!("perf record -e {event} -g")),
        "{text}"
    );
    assert!(text.contains(svg_arg), "{text}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<?xml") && drawn.contains("slow_path"));

    // The defaults, and the profiler's absence as the flag reports it.
    let defaults = CompareArgs::try_parse_from(["compare", "--base", "a", "--head", "b"]).unwrap();
    assert!(!defaults.profile.profile);
    assert_eq!(defaults.profile.profile_runs, 3);
    assert_eq!(
        defaults.profile.profile_svg,
        Path::new("benchgate-profile.svg")
    );
    let missing = Profiler::Unavailable {
        reason: "perf is not on PATH (Debian: apt-get install linux-perf)".into(),
    };
    assert_eq!(
        render(&profile_comparison(&outcome, &args.profile, &missing).unwrap()),
        "Profile: not taken: perf is not on PATH (Debian: apt-get install linux-perf)\n"
    );
    assert!(
        CompareArgs::try_parse_from([
            "compare",
            "--base",
            "a",
            "--head",
            "b",
            "--profile-runs",
            "2"
        ])
        .is_err(),
        "--profile-runs without --profile"
    );
}

/// The e2e program with small loops (fast under valgrind): `slow_path` only when `SLOW` is
/// defined.
const CALLGRIND_WORKLOAD: &str = "volatile unsigned long sink;\n\
__attribute__((noinline)) static void base_work(long n) { unsigned long x = 0; \
for (long i = 0; i < n; i++) x += (i * i) ^ (x >> 3); sink += x; }\n\
__attribute__((noinline)) static void slow_path(long n) { unsigned long x = 1; \
for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + (unsigned long)i; sink += x; }\n\
int main(void) { base_work(4000000);\n#ifdef SLOW\nslow_path(2000000);\n#endif\nreturn 0; }\n";

/// A side as a gungraun suite leaves it: its run writes callgrind output under
/// `target/gungraun/<bench>/<function>/` (here valgrind itself, as gungraun runs it).
fn callgrind_side_dir(slow: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(dir.path().join("prog.c"), CALLGRIND_WORKLOAD).unwrap();
    let mut gcc = Command::new("gcc");
    gcc.args(["-O1", "-g", "-o", "prog", "prog.c"]);
    if slow {
        gcc.arg("-DSLOW");
    }
    assert!(gcc.current_dir(dir.path()).status().unwrap().success());
    dir
}

fn valgrind_available() -> bool {
    let found = Command::new("valgrind").arg("--version").output().is_ok();
    if !found && std::env::var_os("CI").is_some() {
        panic!("valgrind must be installed in CI (.ci/run installs it)");
    }
    found
}

#[test]
fn a_gungraun_side_is_profiled_from_its_own_callgrind_output_exactly() {
    if !valgrind_available() {
        eprintln!("skipped: valgrind is not installed");
        return;
    }
    let _turn = profiling();
    let run = "mkdir -p target/gungraun/suite/fast && valgrind -q --tool=callgrind \
               --callgrind-out-file=target/gungraun/suite/fast/callgrind.fast.out ./prog";
    let side = |dir: &Path| {
        let command = BenchCommand::from_argv(vec!["sh".into(), "-c".into(), run.into()])
            .unwrap()
            .in_dir(dir);
        benchgate_harness::profile::callgrind_side(
            &command,
            &RunnerConfig::default(),
            Limits::default(),
        )
        .unwrap()
    };
    let (base_dir, head_dir) = (callgrind_side_dir(false), callgrind_side_dir(true));
    let (base, head) = (side(base_dir.path()), side(head_dir.path()));
    let slow = head
        .folded
        .stacks()
        .find(|(s, _)| *s == "suite/fast;slow_path")
        .map(|(_, c)| c);
    // Counted, not sampled: the loop's instructions, the same every run.
    assert!(
        slow.is_some_and(|c| c > 2_000_000),
        "{:?}",
        head.folded.to_text()
    );
    let ranked = changes(&base.folded, &head.folded);
    assert_eq!(ranked[0].function, "slow_path", "{ranked:?}");
    assert!(ranked[0].self_pp > 0.0);
    assert_eq!(
        side(base_dir.path()).folded,
        base.folded,
        "exact: the same again"
    );

    // A run that leaves no callgrind output says so.
    let empty = callgrind_side_dir(false);
    let command = BenchCommand::from_argv(vec!["sh".into(), "-c".into(), "true".into()])
        .unwrap()
        .in_dir(empty.path());
    let err = benchgate_harness::profile::callgrind_side(
        &command,
        &RunnerConfig::default(),
        Limits::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("wrote no callgrind output"), "{err}");
}
