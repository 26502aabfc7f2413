//! `benchgate config check FILE` as a user runs it before pushing a `.benchgate.toml`: the real
//! binary, real files; the resolved suites on stdout and exit 0, or the located error and exit 2.

use std::process::Command;

use crate::support::BIN;

fn check(text: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".benchgate.toml");
    std::fs::write(&file, text).unwrap();
    // As a user types it, from the repository: the error names the file as given.
    let out = Command::new(BIN)
        .args(["config", "check", ".benchgate.toml"])
        .current_dir(dir.path())
        .output()
        .expect("run benchgate");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_valid_file_prints_its_suites_labels_check_runs_and_rules() {
    let (code, stdout, stderr) = check(include_str!("fixtures/config/monorepo.toml"));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "valid: 2 suite(s), 3 comparison(s) per pull request
gate: fail_on practical-regression, min_effect 1%, tolerance 5%, rare_slow_runs 1 in 20, claims report, on_no_answer neutral
main: each push to the default branch compared with the commit before it; against the anchor (30d back) every 1d; no issues (issues = false)
merge queue: a group holding one PR whose comparison measured the same code (trees) restates its verdict; otherwise the group's head is compared with its base. Undecided after 45 min: neutral (the queue moves on)

suite parser
  build: cargo build --release
  run: cargo bench -p parser (format criterion)
  rounds: 10 (72 for a pull request: the tail guard's), warmup: 1
  runner linux-x86: check run \"benchgate / parser (linux-x86)\"
  runner linux-arm64: check run \"benchgate / parser (linux-arm64)\"
  rules (first match wins):
    1. parse_* — not gated
    2. flaky_* — ignored
    3. * — min_effect 2%, fail_on regression

suite vm
  run: cargo bench -p vm (format gungraun)
  rounds: 4 (72 for a pull request: the tail guard's), warmup: 0
  runner linux-x86: check run \"benchgate / vm (linux-x86)\"
  rules (first match wins):
    1. vm/** — gated on metric instructions
"
    );
}

#[test]
fn a_lone_benchmark_keeps_the_plain_check_run_name() {
    let (code, stdout, stderr) = check("[benchmark]\nrun = \"make bench\"\nrunner = \"quiet\"\n");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("suite default\n") && stdout.contains("check run \"benchgate\"\n"),
        "{stdout}"
    );
}

#[test]
fn a_typo_in_a_rule_exits_2_with_its_line_column_and_the_valid_keys() {
    let (code, stdout, stderr) = check(
        "[[suite]]\nname = \"a\"\nrun = \"x\"\n\n[[suite.rule]]\nmatch = \"slow_*\"\ngated = false\n",
    );
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        ".benchgate.toml:7:1: `suite[0].rule[0].gated`: unknown field `gated`, expected one of \
         `match`, `min_effect`, `fail_on`, `gate`, `ignore`, `metric`\n"
    );
}

/// A config under another name is reported under that name, not as `.benchgate.toml`.
#[test]
fn an_error_names_the_file_as_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ci.toml"),
        "[benchmark]\nrun = \"x\"\nrounds = 1\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["config", "check", "ci.toml"])
        .current_dir(dir.path())
        .output()
        .expect("run benchgate");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.starts_with("ci.toml:3:"), "{stderr}");
}

/// `config check` with `files` beside the config (a Cargo.lock, a `.git` that ends the search
/// for one), from the repository as a user runs it.
fn check_with(text: &str, files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".benchgate.toml"), text).unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let out = Command::new(BIN)
        .args(["config", "check", ".benchgate.toml"])
        .current_dir(dir.path())
        .output()
        .expect("run benchgate");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Issue 58's suite as a user writes it from the docs: a 1 s warm-up before each benchmark's
/// 1 s is half of every run. The file stays valid (exit 0); the warning says the numbers and
/// the warm-up to write, and with criterion 0.3 in Cargo.lock that it takes whole seconds.
#[test]
fn a_warm_up_as_long_as_the_measuring_is_warned_of_with_the_fix() {
    let config = "[[suite]]\nname = \"req\"\n\
                  run = \"cargo bench -- --warm-up-time 1 --measurement-time {measure_secs}\"\n\
                  format = \"criterion\"\nmeasure = \"1s\"\n";
    let lock = |version: &str| {
        format!(
            "version = 3\n\n[[package]]\nname = \"criterion\"\nversion = \"{version}\"\n\
             source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        )
    };
    let (code, stdout, stderr) = check_with(config, &[("Cargo.lock", &lock("0.5.1"))]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("suite req\n"), "{stdout}");
    assert_eq!(
        stderr,
        "warning: suite req: each benchmark warms up 1 s (`--warm-up-time 1`) for 1 s measured \
         (measure = \"1s\"): half of every run is warm-up, which no round's answer uses and every \
         round pays. Write `--warm-up-time 0.2` in the run command: each round then takes less \
         time for as many rounds\n"
    );

    let (code, _, stderr) = check_with(config, &[("Cargo.lock", &lock("0.3.6"))]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "warning: suite req: each benchmark warms up 1 s (`--warm-up-time 1`) for 1 s measured \
         (measure = \"1s\"): half of every run is warm-up, which no round's answer uses and every \
         round pays. criterion 0.3.6 (Cargo.lock) takes whole seconds, none shorter than 1 s: \
         criterion 0.4 or later takes `--warm-up-time 0.2`; any version takes it set in the \
         bench's code (`Criterion::default().warm_up_time(Duration::from_millis(200))`) with the \
         flag left out of the run command\n"
    );

    // A fraction of a second, which criterion 0.3 would exit on.
    let half = config.replace("measure = \"1s\"", "measure = \"500ms\"");
    let (_, _, stderr) = check_with(&half, &[("Cargo.lock", &lock("0.3.6"))]);
    assert!(
        stderr.starts_with(
            "warning: suite req: measure = \"0.5s\" puts 0.5 s in the run command, which \
             criterion 0.3.6 (Cargo.lock) refuses"
        ),
        "{stderr}"
    );

    // A short warm-up, no Cargo.lock: nothing to warn of.
    let short = config.replace("--warm-up-time 1", "--warm-up-time 0.2");
    let (code, _, stderr) = check_with(&short, &[]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
}
