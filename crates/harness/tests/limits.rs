//! Resource limits with real processes: a memory hog, a fork bomb, a file that grows without end,
//! many small files filling a disk and a daemon left behind are each stopped, said in words, and
//! leave nothing running; the same in the bubblewrap sandbox. cgroup v1 (this machine, as root) limits the whole tree;
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
        disk_bytes: Some(64 * MIB),
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

/// A tmpfs of `mib` MiB mounted on a fresh directory (root only), unmounted on drop: a disk of
/// known size for the disk guard.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(mib: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let size = format!("size={mib}m");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &size, "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if mounted {
            return Some(Tmpfs(dir));
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and may mount a tmpfs"
        );
        eprintln!("skipped: cannot mount a tmpfs here (not root?)");
        None
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// Writes 1 MiB files, each far under the file-size limit, 10 ms apart (so the 250 ms guard
/// sees each step of about 25 MiB), until 1024 are written or a write fails.
const SMALL_FILES: &str = "i=0; while [ $i -lt 1024 ]; do \
     dd if=/dev/zero of=f$i bs=1M count=1 2>>dd.err || exit 9; i=$((i+1)); sleep 0.01; done";

/// Bytes under `dir`, as the files' sizes add up.
fn written(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn many_small_files_are_stopped_at_the_disk_limit_or_before_the_disk_is_full() {
    let _turn = crate::measuring();
    let Some(disk) = Tmpfs::mount(512) else {
        return;
    };
    // The guard needs no cgroup: rlimits containment on every host.
    let c = Containment::rlimits(limits());
    let run = run_process(&shell(disk.0.path(), SMALL_FILES, &c)).unwrap();
    let said = run.contained.clone().unwrap_or_default();
    assert!(
        said.starts_with("stopped at the disk limit (") && said.ends_with("limit 64 MiB)"),
        "{run:?}"
    );
    assert_eq!(run.exit, Exit::Signal(libc::SIGKILL), "{run:?}");
    let wrote = written(disk.0.path());
    assert!((64 * MIB..128 * MIB).contains(&wrote), "{wrote} bytes");

    // Without a disk limit, a disk of 256 MiB keeps an eighth free: stopped before any write
    // failed, and said as the runner's trouble.
    let Some(small) = Tmpfs::mount(256) else {
        return;
    };
    let unlimited = Containment::rlimits(Limits {
        disk_bytes: None,
        ..limits()
    });
    let run = run_process(&shell(small.0.path(), SMALL_FILES, &unlimited)).unwrap();
    let said = run.contained.clone().unwrap_or_default();
    assert!(
        said.starts_with("stopped with its worktree's disk nearly full (32 MiB kept free;"),
        "{run:?}"
    );
    let errors = std::fs::read_to_string(small.0.path().join("dd.err")).unwrap_or_default();
    assert!(!errors.contains("No space left"), "{errors}");
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
    let argv =
        |script: &str| sandbox.run_argv(dir.path(), &["sh".into(), "-c".into(), script.into()]);
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
