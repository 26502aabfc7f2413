//! Resource limits with real processes: a memory hog, a fork bomb, a file that grows without end
//! and a daemon left behind are each stopped, said in words, and leave nothing running; the
//! same in the bubblewrap sandbox. cgroup v1 (this machine, as root) limits the whole tree;
//! without it the tests of the tree-wide limits skip with the reason (and fail in CI).

use std::path::Path;

use benchgate_harness::limits::{Containment, Limits};
use benchgate_harness::process::{Exit, RunSpec, run_process};
use benchgate_harness::sandbox::Sandbox;

const MIB: u64 = 1 << 20;

fn limits() -> Limits {
    Limits {
        memory_bytes: Some(128 * MIB),
        processes: Some(64),
        cpu_seconds: Some(30),
        file_bytes: Some(8 * MIB),
    }
}

/// cgroup v1 containment, or `None` with the reason printed (a failure in CI).
fn cgroups() -> Option<Containment> {
    let c = Containment::detect(limits());
    if c.mechanism() == "cgroup v1" {
        return Some(c);
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI runs as root on a host with cgroup v1 memory and pids controllers");
    }
    eprintln!("skipped: no writable cgroup v1 memory and pids controllers here");
    None
}

fn shell(dir: &Path, script: &str, containment: &Containment) -> RunSpec {
    RunSpec {
        cwd: Some(dir.to_path_buf()),
        containment: Some(containment.clone()),
        ..RunSpec::new(vec!["sh".into(), "-c".into(), script.into()])
    }
}

/// Grows by 1 MiB at a time towards 64 GiB, touching every page.
const MEMORY_HOG: &str =
    "perl -e 'my @a; for (1 .. 65536) { push @a, \"x\" x (1 << 20) } print scalar(@a), \"\\n\"'";
/// Starts `sleep`s in the background until a fork fails (bounded, in case no limit holds).
const FORK_BOMB: &str = "i=0; while [ $i -lt 2000 ]; do sleep 120 & i=$((i+1)); done; wait";

#[test]
fn a_memory_hog_is_stopped_at_the_tree_limit_and_said_so() {
    let _turn = crate::measuring();
    let Some(c) = cgroups() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = run_process(&shell(dir.path(), MEMORY_HOG, &c)).unwrap();
    // Killed by the kernel: perl by SIGKILL, its shell then with 137.
    assert!(
        matches!(run.exit, Exit::Signal(libc::SIGKILL) | Exit::Code(137)),
        "{run:?}"
    );
    assert_eq!(
        run.contained.as_deref(),
        Some("stopped at the memory limit (128 MiB, cgroup v1)"),
        "{run:?}"
    );
    assert!(run.peak_rss_bytes <= 140 * MIB, "{}", run.peak_rss_bytes);
}

#[test]
fn a_fork_bomb_reaches_the_process_limit_and_leaves_nothing_running() {
    let Some(c) = cgroups() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Sleeps named by this test's pid (`sleep 120.PID`), so a survivor is found by name.
    let marker = format!("sleep 120.{}", std::process::id());
    let script = FORK_BOMB.replace("sleep 120", &marker);
    let run = run_process(&shell(dir.path(), &script, &c)).unwrap();
    assert!(!run.exit.success() || run.contained.is_some(), "{run:?}");
    let why = run.contained.unwrap();
    assert!(
        why.starts_with("reached the process limit (64, cgroup v1)"),
        "{why}"
    );
    let left = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "still running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn a_daemon_left_behind_is_killed_and_the_run_measures_nothing() {
    let Some(c) = cgroups() else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("daemon-pid");
    // A daemon: detached from the session, stdio closed, still running when its parent exits.
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 300' < /dev/null > /dev/null 2>&1 & \
         while [ ! -s {} ]; do sleep 0.01; done; exit 0",
        marker.display(),
        marker.display()
    );
    let run = run_process(&shell(dir.path(), &script, &c)).unwrap();
    assert_eq!(run.exit, Exit::Code(0));
    assert_eq!(
        run.contained.as_deref(),
        Some("left 1 process(es) running after it ended; they were killed"),
        "{run:?}"
    );
    let pid = std::fs::read_to_string(&marker).unwrap();
    assert!(!alive(pid.trim()), "the daemon {pid} outlived its run");
}

#[test]
fn a_file_past_the_size_limit_stops_its_writer() {
    // The file-size limit is an rlimit on every host.
    let c = Containment::rlimits(limits());
    let dir = tempfile::tempdir().unwrap();
    let run = run_process(&shell(
        dir.path(),
        "exec dd if=/dev/zero of=fill bs=1M count=64 2>/dev/null",
        &c,
    ))
    .unwrap();
    assert_eq!(run.exit, Exit::Signal(libc::SIGXFSZ), "{run:?}");
    assert_eq!(
        run.contained.as_deref(),
        Some("stopped at the file size limit (8 MiB per file)")
    );
    let size = std::fs::metadata(dir.path().join("fill")).unwrap().len();
    assert_eq!(size, 8 * MIB);
}

/// The limits hold inside the sandbox too: bwrap is the process the cgroup holds, and
/// everything it starts stays in it.
#[test]
fn the_sandbox_keeps_the_limits() {
    let _turn = crate::measuring();
    let Some(c) = cgroups() else { return };
    let Ok(sandbox) = Sandbox::from_path().and_then(|s| s.probe().map(|()| s)) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "bubblewrap must work in CI"
        );
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let argv = |script: &str| sandbox.argv(dir.path(), &["sh".into(), "-c".into(), script.into()]);
    let spec = |script: &str| RunSpec {
        cwd: Some(dir.path().to_path_buf()),
        containment: Some(c.clone()),
        ..RunSpec::new(argv(script))
    };
    let hog = run_process(&spec(MEMORY_HOG)).unwrap();
    assert_eq!(
        hog.contained.as_deref(),
        Some("stopped at the memory limit (128 MiB, cgroup v1)"),
        "{hog:?}"
    );
    let bomb = run_process(&spec(FORK_BOMB)).unwrap();
    assert!(
        bomb.contained
            .as_deref()
            .is_some_and(|w| w.starts_with("reached the process limit")),
        "{bomb:?}"
    );
    // A plain run is untouched by the limits.
    let plain = run_process(&spec("echo fine")).unwrap();
    assert_eq!((plain.exit, plain.contained), (Exit::Code(0), None));
}

/// Whether process `pid` still runs (a zombie waiting for its reaper does not).
fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat[stat.rfind(')').unwrap() + 1..]
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// An agent killed mid-run leaves its group behind; the next start removes it.
#[test]
fn groups_of_an_agent_that_died_are_removed_at_the_next_start() {
    let Some(_) = cgroups() else { return };
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale: Vec<_> = ["memory", "pids"]
        .iter()
        .map(|c| {
            Path::new("/sys/fs/cgroup")
                .join(c)
                .join(format!("benchgate/{dead}-7"))
        })
        .collect();
    for dir in &stale {
        std::fs::create_dir_all(dir).unwrap();
    }
    let _ = Containment::detect(limits());
    for dir in &stale {
        assert!(!dir.exists(), "{} is still there", dir.display());
    }
}
