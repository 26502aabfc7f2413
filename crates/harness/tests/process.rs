//! One measured process, with real children: environment, timeout, rusage, quieting.

use std::time::{Duration, Instant};

use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::process::{Exit, RunSpec, run_process};

fn sh(script: &str) -> RunSpec {
    RunSpec::new(vec!["sh".into(), "-c".into(), script.into()])
}

/// The name of [`allocating_child`] in this test binary, to run it alone.
pub const ALLOCATING_CHILD: &str = "process::allocating_child";

/// Child mode of this test binary: allocates and touches 256 MiB, then exits.
#[test]
fn allocating_child() {
    if std::env::var_os("BENCHGATE_TEST_ALLOCATE").is_some() {
        let block = vec![1u8; 256 << 20];
        std::hint::black_box(&block);
    }
}

#[test]
fn a_child_never_sees_a_secret_of_the_parent() {
    // SAFETY: nextest runs each test in its own process, so no other thread reads the env.
    unsafe { std::env::set_var("BENCHGATE_RUNNER_TOKEN", "s3cret-token") };
    unsafe { std::env::set_var("BENCHGATE_TEST_LISTED", "listed-value") };
    let mut spec = RunSpec::new(vec!["env".into()]);
    spec.env = ScrubbedEnv::from_parent(&["BENCHGATE_TEST_LISTED".into()]).unwrap();
    let run = run_process(&spec).unwrap();
    let env = run.stdout.text();
    assert!(!env.contains("s3cret-token"), "{env}");
    assert!(env.contains("BENCHGATE_TEST_LISTED=listed-value"), "{env}");
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        assert!(
            ["PATH", "HOME", "LANG", "TMPDIR", "BENCHGATE_TEST_LISTED"].contains(name),
            "unexpected variable {name} in {names:?}"
        );
    }
}

/// Whether `pid` stops running within a second: gone, or a zombie waiting for init to reap it.
fn stops_running(pid: i32) -> bool {
    (0..50).any(|_| {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let dead = state.map_or(true, |s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        });
        if !dead {
            std::thread::sleep(Duration::from_millis(20));
        }
        dead
    })
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let mut spec = sh("sleep 30 & echo $!; wait");
    spec.timeout = Some(Duration::from_millis(300));
    let started = Instant::now();
    let run = run_process(&spec).unwrap();
    assert_eq!(run.exit, Exit::TimedOut);
    // A semantic bound, not a timing claim: the 30 s grandchild did not keep us waiting.
    assert!(started.elapsed() < Duration::from_secs(20));
    let grandchild: i32 = run.stdout.text().trim().parse().unwrap();
    assert!(
        stops_running(grandchild),
        "background sleep {grandchild} survived the timeout"
    );
}

#[test]
fn timeout_kills_a_child_that_ignores_sigterm_and_its_grandchildren_without_stdout() {
    // Both ignore SIGTERM (an ignored signal stays ignored across fork and exec).
    let mut spec = sh("trap '' TERM; sleep 30 & echo $$ $! >&2; wait; sleep 30");
    spec.timeout = Some(Duration::from_millis(300));
    spec.capture_stdout = false;
    let run = run_process(&spec).unwrap();
    assert_eq!(run.exit, Exit::TimedOut);
    let pids: Vec<i32> = run
        .stderr
        .text()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{}", run.stderr.text());
    for pid in pids {
        assert!(stops_running(pid), "{pid} survived the timeout");
    }
}

#[test]
fn a_process_that_left_the_group_holding_stdout_ends_the_run_at_the_timeout() {
    // setsid puts the sleep in its own session, out of reach of the group kill; it keeps the
    // stdout pipe open after the shell has exited. The shell exits once that has happened (the
    // session id, field 6 of /proc/PID/stat, is the pid itself).
    let mut spec = sh("setsid sleep 30 & echo $!
         until [ \"$(cut -d' ' -f6 /proc/$!/stat)\" = $! ]; do sleep 0.01; done");
    spec.timeout = Some(Duration::from_millis(300));
    let started = Instant::now();
    let run = run_process(&spec).unwrap();
    let escaped: i32 = run.stdout.text().trim().parse().unwrap();
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(escaped).unwrap(),
        rustix::process::Signal::KILL,
    );
    // The run did not wait the 30 s for that pipe, and says its output never ended.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(run.exit, Exit::TimedOut);
}

#[test]
fn megabytes_on_both_streams_do_not_block_and_stdout_is_read_whole() {
    // stderr first: a reader that waited for stdout to end before reading stderr would leave
    // the child blocked on a full stderr pipe for ever.
    let run = run_process(&sh(
        "yes err | head -c 1000000 >&2; yes out | head -c 1000000; yes err | head -c 100000 >&2",
    ))
    .unwrap();
    assert!(run.exit.success(), "{}", run.stderr.tail_lines(3));
    assert_eq!(
        (run.stdout.total, run.stdout.bytes.len()),
        (1_000_000, 1_000_000)
    );
    assert!(run.stdout.text().lines().all(|l| l == "out"));
    assert_eq!(run.stderr.total, 1_100_000);
    assert_eq!(run.stderr.bytes.len(), 64 << 10);
    assert!(run.stderr.text().ends_with("err\n"));
}

#[test]
fn a_program_found_in_path_keeps_the_name_it_was_given() {
    // What the child sees as argv[0] is what the user wrote, not the path it was found at.
    let run = run_process(&sh("tr '\\0' ' ' < /proc/$$/cmdline")).unwrap();
    assert!(
        run.stdout.text().starts_with("sh -c "),
        "{}",
        run.stdout.text()
    );
}

#[test]
fn the_wall_clock_brackets_the_child_inside_the_call() {
    // Semantic bounds, not a speed claim: the child's start is sent by the child itself, so a
    // wrong clock or unit would put the wall time outside these.
    let called = Instant::now();
    let run = run_process(&sh("sleep 0.05")).unwrap();
    let call = called.elapsed();
    assert!(run.exit.success());
    assert!(
        run.wall >= Duration::from_millis(50) && run.wall <= call,
        "wall {:?}, call {call:?}",
        run.wall
    );
}

#[test]
fn exit_codes_signals_and_stderr_are_kept() {
    let run = run_process(&sh("echo out; echo boom >&2; exit 3")).unwrap();
    assert_eq!(run.exit, Exit::Code(3));
    assert_eq!(run.stdout.text(), "out\n");
    assert_eq!(run.stderr.tail_lines(1), "boom");
    let killed = run_process(&sh("kill -9 $$")).unwrap();
    assert_eq!(killed.exit, Exit::Signal(9));
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let err = run_process(&RunSpec::new(vec!["/nonexistent/benchgate-bench".into()])).unwrap_err();
    assert!(err.to_string().contains("cannot start"), "{err}");
}

#[test]
fn an_executable_still_open_for_writing_is_started_once_it_is_closed() {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    // The state another thread's fork leaves a just-written script in: open for writing, so exec
    // fails with "Text file busy" until the writer is gone.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench");
    let mut writer = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&path)
        .unwrap();
    writer.write_all(b"#!/bin/sh\necho started\n").unwrap();
    let spec = RunSpec::new(vec![path.to_str().unwrap().into()]);
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        drop(writer);
    });
    let run = run_process(&spec).unwrap();
    closer.join().unwrap();
    assert!(run.exit.success());
    assert_eq!(run.stdout.text(), "started\n");
}

/// Probe mode of this test binary: measures the two children from a fresh process. A forked
/// child starts with the pages it shares with its parent, so in the parent test process, where
/// other tests run at the same time and hold memory, the small child would report theirs.
#[test]
fn peak_rss_probe() {
    if std::env::var_os("BENCHGATE_TEST_PEAK_PROBE").is_none() {
        return;
    }
    let exe = std::env::current_exe()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let child = |allocate: bool| {
        let mut spec = RunSpec::new(vec![exe.clone(), ALLOCATING_CHILD.into(), "--exact".into()]);
        if allocate {
            spec.env.set("BENCHGATE_TEST_ALLOCATE", "1".into());
        }
        let run = run_process(&spec).unwrap();
        assert!(run.exit.success(), "{}", run.stderr.text());
        run
    };
    let (small, large) = (child(false), child(true));
    let cpu = (large.user_cpu + large.sys_cpu).as_nanos();
    println!(
        "PEAK {} {} {cpu}",
        small.peak_rss_bytes, large.peak_rss_bytes
    );
}

#[test]
fn peak_rss_of_an_allocating_program_is_larger() {
    // A concurrent test (`…_not_the_harness_s_past_peak`) touches 256 MiB in this process.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "process::peak_rss_probe",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BENCHGATE_TEST_PEAK_PROBE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| Some(&l[l.find("PEAK ")? + 5..]))
        .unwrap_or_else(|| panic!("no PEAK line: {stdout}"));
    let [small, large, cpu_ns]: [u64; 3] = line
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    assert!(large >= small + (200 << 20), "{large} vs {small}");
    assert!(large < 512 << 20, "{large}");
    assert!(cpu_ns > 0, "the allocating child used no CPU time");
}

#[test]
fn peak_rss_of_a_small_program_is_not_the_harness_s_past_peak() {
    // 256 MiB touched and freed (returned to the kernel: an allocation this large is its own
    // mapping), so this process's high-water mark is high while little of it is resident now.
    let block = vec![1u8; 256 << 20];
    std::hint::black_box(&block);
    drop(block);
    let run = run_process(&RunSpec::new(vec!["true".into()])).unwrap();
    assert!(
        run.peak_rss_bytes < 64 << 20,
        "true reported {} bytes",
        run.peak_rss_bytes
    );
}

#[test]
fn pinning_and_aslr_reach_the_child() {
    let mut spec = sh("grep Cpus_allowed_list /proc/self/status; cat /proc/self/personality");
    spec.cpus = vec![0];
    spec.disable_aslr = true;
    let run = run_process(&spec).unwrap();
    let out = run.stdout.text();
    assert!(out.lines().next().unwrap().ends_with("\t0"), "{out}");
    let persona = u32::from_str_radix(out.lines().nth(1).unwrap().trim(), 16).unwrap();
    assert_ne!(persona & 0x0040000, 0, "ADDR_NO_RANDOMIZE not set: {out}");
}

#[test]
fn output_beyond_the_cap_is_cut_but_drained() {
    let mut spec = sh("head -c 1000000 /dev/zero");
    spec.stdout_cap = 1000;
    let run = run_process(&spec).unwrap();
    assert!(run.exit.success());
    assert_eq!(
        (run.stdout.bytes.len(), run.stdout.total),
        (1000, 1_000_000)
    );
}

#[test]
fn a_stdout_nobody_reads_is_dev_null() {
    // Expanded before dash applies `>&2` to the shell itself.
    let mut spec = sh(r#"echo "$(readlink /proc/$$/fd/1)" >&2; echo discarded"#);
    spec.capture_stdout = false;
    let run = run_process(&spec).unwrap();
    assert!(run.exit.success());
    assert_eq!(run.stderr.text(), "/dev/null\n");
    assert_eq!(run.stdout.total, 0);
}
