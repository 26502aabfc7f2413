//! PR code in the bubblewrap sandbox, with real processes: it cannot write the other side's
//! worktree or anything outside its own, cannot read hidden files, and is still measured
//! (exit, CPU time, peak RSS, timeout) through bwrap.
//!
//! Without a working bwrap the tests skip with the reason printed; in CI (`CI` set) they fail.

use std::path::{Path, PathBuf};
use std::time::Duration;

use benchgate_harness::process::{Exit, RunSpec, run_process};
use benchgate_harness::sandbox::{Sandbox, left_running};

use crate::process::ALLOCATING_CHILD;

/// A working sandbox, or `None` with the reason printed (a failure in CI).
fn sandbox() -> Option<Sandbox> {
    let probed = Sandbox::from_path().and_then(|s| s.probe().map(|()| s));
    match probed {
        Ok(sandbox) => Some(sandbox),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("bubblewrap must work in CI (.ci/run installs it): {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// Outside /tmp, which the sandbox replaces anyway: hiding must be what protects these.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

struct Layout {
    work: PathBuf,
    base: PathBuf,
    head: PathBuf,
    config: PathBuf,
    outside: PathBuf,
}

fn layout(root: &Path) -> Layout {
    let work = root.join("work");
    let (base, head) = (work.join("repo/base"), work.join("repo/head"));
    let config = root.join("etc-benchgate");
    let outside = root.join("outside");
    for dir in [&base, &head, &config, &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(base.join("iterations"), "1000").unwrap();
    std::fs::write(config.join("token"), "runner-token-secret").unwrap();
    std::fs::write(root.join("agent.token"), "file-token-secret").unwrap();
    Layout {
        work,
        base,
        head,
        config,
        outside,
    }
}

fn sandboxed(sandbox: &Sandbox, dir: &Path, script: &str) -> RunSpec {
    let shell = ["sh".to_owned(), "-c".to_owned(), script.to_owned()];
    RunSpec {
        cwd: Some(dir.to_path_buf()),
        ..RunSpec::new(sandbox.run_argv(dir, &shell))
    }
}

#[test]
fn hostile_code_cannot_touch_the_other_side_read_secrets_or_write_outside() {
    let Some(sandbox) = sandbox() else { return };
    let tmp = scratch();
    let l = layout(tmp.path());
    let sandbox = sandbox
        .hide(&l.work)
        .hide(&l.config)
        .hide(tmp.path().join("agent.token"));
    let base = l.base.display();
    let script = format!(
        "echo 99999999 > {base}/iterations; echo \"base: $?\"
         echo 99999999 > ../base/iterations; echo \"relative base: $?\"
         echo \"token: [$(cat {config}/token 2>&1)]\"
         echo \"token file: [$(cat {token})]\"
         echo \"work dir: [$(ls {work})]\"
         echo x > {outside}/pwned; echo \"outside: $?\"
         echo x > \"$HOME/benchgate-pwned\"; echo \"home: $?\"
         echo x > own && echo \"own: $?\"
         echo x > \"$TMPDIR/t\" && echo \"tmp: $?\"",
        config = l.config.display(),
        token = tmp.path().join("agent.token").display(),
        work = l.work.display(),
        outside = l.outside.display(),
    );
    let run = run_process(&sandboxed(&sandbox, &l.head, &script)).unwrap();
    let out = run.stdout.text();
    let err = run.stderr.text();
    let seen = format!("stdout:\n{out}\nstderr:\n{err}");

    assert_eq!(
        std::fs::read_to_string(l.base.join("iterations")).unwrap(),
        "1000",
        "{seen}"
    );
    for line in ["base: 2", "relative base: 2", "outside: 2", "home: 2"] {
        assert!(
            out.contains(line),
            "expected {line:?} (a failed write):\n{seen}"
        );
    }
    assert!(!out.contains("secret"), "a secret was read:\n{seen}");
    assert!(out.contains("token file: []"), "{seen}");
    assert!(
        out.contains("work dir: [repo]"),
        "only the path to the own worktree shows:\n{seen}"
    );
    assert!(err.contains("Read-only file system"), "{seen}");
    assert!(!l.outside.join("pwned").exists());
    if let Some(home) = std::env::var_os("HOME") {
        assert!(!Path::new(&home).join("benchgate-pwned").exists());
    }
    assert!(out.contains("own: 0") && out.contains("tmp: 0"), "{seen}");
    assert_eq!(std::fs::read_to_string(l.head.join("own")).unwrap(), "x\n");
}

#[test]
fn a_sandboxed_run_is_measured_like_an_unsandboxed_one() {
    let Some(sandbox) = sandbox() else { return };
    let tmp = scratch();
    let dir = tmp.path().join("side");
    std::fs::create_dir(&dir).unwrap();

    let failed = run_process(&sandboxed(&sandbox, &dir, "echo out; exit 3")).unwrap();
    assert_eq!(failed.exit, Exit::Code(3));
    assert_eq!(failed.stdout.text(), "out\n");

    // This test binary's allocating child (in tests/process.rs), in the sandbox; shown, since
    // the build may live under the sandbox's private /tmp.
    let me = std::env::current_exe().unwrap();
    let sandbox = sandbox.show(&me);
    let mut alloc = RunSpec {
        cwd: Some(dir.clone()),
        ..RunSpec::new(sandbox.run_argv(
            &dir,
            &[
                me.to_string_lossy().into_owned(),
                "--exact".into(),
                ALLOCATING_CHILD.into(),
            ],
        ))
    };
    alloc.env.set("BENCHGATE_TEST_ALLOCATE", "1".into());
    let run = run_process(&alloc).unwrap();
    assert!(run.exit.success(), "{}", run.stderr.text());
    assert!(
        run.peak_rss_bytes >= 256 << 20,
        "peak RSS of the process inside bwrap: {}",
        run.peak_rss_bytes
    );
    assert!(run.user_cpu + run.sys_cpu > Duration::ZERO);

    let mut slow = sandboxed(&sandbox, &dir, "sleep 30");
    slow.timeout = Some(Duration::from_millis(300));
    let run = run_process(&slow).unwrap();
    assert_eq!(run.exit, Exit::TimedOut);
    assert!(run.wall < Duration::from_secs(10), "{:?}", run.wall);
}

/// A run that starts a daemon (its own session, output detached) and exits 0: the daemon is
/// killed when the run ends, and the run says how many it left, so it measures nothing.
#[test]
fn a_daemon_left_in_the_sandbox_is_killed_and_said() {
    let Some(sandbox) = sandbox() else { return };
    let tmp = scratch();
    let dir = tmp.path().join("side");
    std::fs::create_dir(&dir).unwrap();
    let marker = format!("sleep 302.{}", std::process::id());
    let script = format!("setsid {marker} < /dev/null > /dev/null 2>&1 & echo started >&2");
    let run = run_process(&sandboxed(&sandbox, &dir, &script)).unwrap();
    assert_eq!(run.exit, Exit::Code(0), "{}", run.stderr.text());
    assert_eq!(
        run.contained.as_deref(),
        Some("left 1 process(es) running after it ended; they were killed"),
        "{}",
        run.stderr.text()
    );
    let running = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .status()
        .unwrap();
    assert!(!running.success(), "{marker} outlived its run");

    // A run that leaves nothing says nothing, whatever it prints.
    let clean = run_process(&sandboxed(
        &sandbox,
        &dir,
        "sleep 0.1 & wait; echo done >&2",
    ))
    .unwrap();
    assert_eq!(clean.exit, Exit::Code(0));
    assert_eq!(clean.contained, None, "{}", clean.stderr.text());
    assert_eq!(left_running("done\n"), None);
}

/// A session's warm-up runs say what a run left running; its measured runs go without the
/// counting `sh`, whose wake-up would be timed, so there the daemon dies with the namespace.
#[test]
fn warm_up_runs_say_what_a_run_left_and_measured_runs_are_not_wrapped() {
    use benchgate_harness::command::BenchCommand;
    use benchgate_harness::rounds::{RoundRunner, RunnerConfig};
    use benchgate_harness::schedule::Schedule;

    let Some(sandbox) = sandbox() else { return };
    let tmp = scratch();
    let marker = format!("sleep 303.{}", std::process::id());
    let side = |name: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        BenchCommand {
            argv: vec![
                "sh".to_owned(),
                "-c".to_owned(),
                format!("setsid {marker} < /dev/null > /dev/null 2>&1 &"),
            ],
            cwd: Some(dir),
            env: Vec::new(),
        }
    };
    let config = RunnerConfig {
        sandbox: Some(sandbox),
        ..RunnerConfig::default()
    };
    let runner = || RoundRunner::new(side("base"), side("head"), config.clone(), Schedule::Abba);
    let said = runner().warm_up(1).unwrap_err().to_string();
    assert!(
        said.contains("left 1 process(es) running after it ended; they were killed"),
        "{said}"
    );
    let round = runner().run_round().unwrap();
    assert!(!round.base.is_empty() && !round.head.is_empty());
    let running = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .status()
        .unwrap();
    assert!(!running.success(), "{marker} outlived its run");
}
