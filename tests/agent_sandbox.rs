//! A hostile PR against a sandboxed `benchgate agent`, end to end: the real server and agent, a
//! real git repository whose head's build and benchmark try to slow the base down by rewriting
//! its worktree, read the agent's settings and state, write outside their own worktree, and
//! reach a service on the host (the build may: it fetches dependencies; a run may not).
//! None of it may succeed, and the comparison must still say what the head really does.
//!
//! Without a working bwrap the test skips with the reason printed; in CI (`CI` set) it fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::agent::{
    AgentProcess, BASE_ITERATIONS, BenchRepo, HEAD_ITERATIONS, add_runner, bwrap_works,
    create_comparison, job_errors, spawn_server_at, wait_finished,
};
use crate::support::{BIN, git, measuring_turn};
use benchgate_api::VerdictKind;

/// The head's attack, run by its build and again by every benchmark run: each line of
/// `attack.log` (in its own worktree) says what one attempt got.
fn attack_script(work_dir: &Path, config: &Path, outside: &Path, listener: u16) -> String {
    let (work, config, outside) = (work_dir.display(), config.display(), outside.display());
    format!(
        "log=\"$PWD/attack-$1.log\"\n\
         for f in ../base/iterations {work}/repos/*/base/iterations; do\n\
           echo 75000000 > \"$f\"; echo \"write $f: $?\" >> \"$log\"\n\
         done\n\
         echo x > ../base/planted; echo \"write planted: $?\" >> \"$log\"\n\
         echo \"agent settings: [$(cat {config}/agent.env 2>&1)]\" >> \"$log\"\n\
         echo \"state dir: [$(ls {work}/repos/* 2>&1)]\" >> \"$log\"\n\
         echo \"mirror config: [$(cat {work}/repos/*/mirror.git/config 2>&1)]\" >> \"$log\"\n\
         echo \"agent environment: [$(cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep TOKEN)]\" >> \"$log\"\n\
         echo x > {outside}/pwned; echo \"outside: $?\" >> \"$log\"\n\
         echo x > \"$HOME/benchgate-pwned\"; echo \"home: $?\" >> \"$log\"\n\
         perl -MIO::Socket::INET -e 'exit(IO::Socket::INET->new(PeerAddr => \"127.0.0.1:{listener}\", \
         Timeout => 2) ? 0 : 1)'; echo \"network: $?\" >> \"$log\"\n"
    )
}

/// A repository whose base is a plain benchmark and whose head does three times the work and
/// attacks: were the attack to work, base would do ten times the head's work and head would
/// look faster.
fn hostile_repo(dir: &Path, attack: &str) -> (PathBuf, String, String) {
    let path = dir.join("project");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(
        path.join("bench.sh"),
        "#!/bin/sh\n[ -f attack.sh ] && sh attack.sh run\n\
         exec \"$BENCHGATE_BIN\" spin --iterations \"$(cat iterations)\"\n",
    )
    .unwrap();
    std::fs::write(
        path.join("build.sh"),
        "[ -f attack.sh ] && sh attack.sh build\nenv > build.out\n",
    )
    .unwrap();
    std::fs::write(path.join(".gitignore"), "build.out\nattack-*.log\n").unwrap();
    std::fs::write(path.join("iterations"), BASE_ITERATIONS.to_string()).unwrap();
    git(&path, &["init", "-q"]);
    git(&path, &["add", "."]);
    git(&path, &["commit", "-qm", "base"]);
    let base = git(&path, &["rev-parse", "HEAD"]);
    std::fs::write(path.join("iterations"), HEAD_ITERATIONS.to_string()).unwrap();
    std::fs::write(path.join("attack.sh"), attack).unwrap();
    git(&path, &["add", "."]);
    git(&path, &["commit", "-qm", "head: more work, and an attack"]);
    let head = git(&path, &["rev-parse", "HEAD"]);
    (path, base, head)
}

#[tokio::test]
async fn a_hostile_head_cannot_rewrite_base_read_the_agent_or_write_outside() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    // Outside /tmp, which the sandbox replaces anyway: the hiding must be what protects these.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let token = add_runner(&db, "guarded");
    let config = dir.path().join("etc-benchgate");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("agent.env"),
        format!("BENCHGATE_TOKEN={token}\n"),
    )
    .unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let work_dir = dir.path().join("agent-guarded");
    // A service on the host's loopback: builds may reach it, runs may not (no `network`).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let attack = attack_script(&work_dir, &config, &outside, port);
    let (repo, base, head) = hostile_repo(dir.path(), &attack);

    let hide = config.to_string_lossy().into_owned();
    let agent = AgentProcess::spawn(
        "guarded",
        &server,
        &token,
        dir.path(),
        &["--sandbox", "bwrap", "--sandbox-hide", &hide],
    );
    let mut req = BenchRepo {
        path: repo,
        base,
        head,
    }
    .comparison(10, Vec::new());
    req.config.benchmark.build = Some("sh build.sh".into());
    req.config
        .benchmark
        .env
        .push(format!("BENCHGATE_BIN={BIN}"));
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, Duration::from_secs(90), &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
    assert!(
        agent.logged("PR builds and runs are sandboxed"),
        "{}",
        agent.logs()
    );

    assert!(
        !outside.join("pwned").exists(),
        "wrote outside its worktree"
    );
    if let Some(home) = std::env::var_os("HOME") {
        assert!(
            !Path::new(&home).join("benchgate-pwned").exists(),
            "wrote to $HOME"
        );
    }
    // What each attempt got, as the attack logged it in its own tree: a head whose build, then
    // one whose run, prints that log after the attack and fails, so the job's log tail keeps it
    // (the tree itself is laid afresh by the runner's next job).
    for phase in ["build", "run"] {
        let print = format!("[ -f attack.sh ] || exit 0; cat attack-{phase}.log >&2; exit 1");
        let mut failing = req.clone();
        if phase == "build" {
            failing.config.benchmark.build = Some(format!("sh build.sh; {print}"));
        } else {
            failing.config.benchmark.run = format!("sh -c 'sh bench.sh; {print}'");
        }
        let created = create_comparison(&server, &failing).await;
        let ended = wait_finished(&server, created.id, Duration::from_secs(90), &[&agent]).await;
        assert_eq!(ended.state, "failed", "{ended:?}\n{}", agent.logs());
        let log = job_errors(&db, created.id).await.join("\n");
        assert!(
            log.contains("agent settings: ["),
            "the {phase} attack left no log:\n{log}"
        );
        assert!(!log.contains(&token), "the {phase} read the token:\n{log}");
        assert!(
            log.lines()
                .filter(|l| l.starts_with("write ")
                    || l.starts_with("outside")
                    || l.starts_with("home"))
                .all(|l| l.ends_with(": 2")),
            "a write of the {phase} succeeded:\n{log}"
        );
        assert!(log.contains("agent environment: []"), "{log}");
        assert!(log.contains("No such file"), "{log}");
        let reached = if phase == "build" {
            "network: 0"
        } else {
            "network: 1"
        };
        assert!(log.contains(reached), "the {phase}'s network:\n{log}");
    }
    drop(listener);

    // Honest results: head does three times base's work, and the comparison says so.
    let headline = status.runners.iter().find(|r| r.headline).unwrap();
    let cpu = headline
        .report
        .benchmarks
        .iter()
        .find(|b| b.name == "command" && b.metric == "cpu_time")
        .expect("a cpu_time result");
    assert_eq!(cpu.verdict, VerdictKind::Slower, "{cpu:?}");
    assert!(cpu.change_pct.is_some_and(|p| p > 100.0), "{cpu:?}");
}

/// Hostile heads against the real agent with the sandbox on and small limits: a memory hog, a
/// fork bomb, a run that fills `/tmp`, one that writes a file without end and one that leaves a
/// daemon. Each job fails with the limit named, the agent stays up, nothing of the head keeps
/// running, and the next job on the runner completes with an honest verdict.
#[tokio::test]
async fn hostile_heads_are_stopped_at_their_limits_and_the_runner_stays_fit() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    if benchgate_harness::limits::Containment::detect(Default::default()).mechanism() != "cgroup v1"
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root with cgroup v1 memory and pids controllers"
        );
        eprintln!("skipped: no writable cgroup v1 controllers");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let token = add_runner(&db, "limited");
    let agent = AgentProcess::spawn(
        "limited",
        &server,
        &token,
        dir.path(),
        &[
            "--sandbox",
            "bwrap",
            "--limit-memory",
            "256MiB",
            "--limit-processes",
            "128",
            "--limit-tmp",
            "32MiB",
            "--limit-file-size",
            "64MiB",
        ],
    );
    let marker = format!("sleep 300.{}", std::process::id());
    let daemon = format!("sleep 301.{}", std::process::id());
    let hostile = [
        (
            "memory",
            "perl -e 'my @a; for (1 .. 65536) { push @a, \"x\" x (1 << 20) }'".to_owned(),
            "stopped at the memory limit (256 MiB, cgroup v1)",
        ),
        (
            "fork",
            format!("i=0; while [ $i -lt 1000 ]; do {marker} & i=$((i+1)); done; wait"),
            "reached the process limit (128, cgroup v1)",
        ),
        (
            "tmp",
            "dd if=/dev/zero of=/tmp/fill bs=1M count=1024".to_owned(),
            "No space left on device",
        ),
        (
            "file",
            "exec dd if=/dev/zero of=fill bs=1M count=1024".to_owned(),
            "stopped at the file size limit (64 MiB per file)",
        ),
        (
            // The sandbox's pid 1 counts what is left when the run ends; the PID namespace's
            // end kills it.
            "daemon",
            format!("setsid {daemon} < /dev/null > /dev/null 2>&1 &"),
            "left 1 process(es) running after it ended; they were killed",
        ),
    ];
    for (name, attack, said) in &hostile {
        let repo = dir.path().join(format!("hostile-{name}"));
        let (path, base, head) = limited_repo(&repo, attack);
        let req = BenchRepo { path, base, head }.comparison(4, Vec::new());
        let created = create_comparison(&server, &req).await;
        let status = wait_finished(&server, created.id, Duration::from_secs(120), &[&agent]).await;
        assert_eq!(
            status.state,
            "failed",
            "{name}: {status:?}\n{}",
            agent.logs()
        );
        let errors = job_errors(&db, created.id).await;
        assert!(
            errors.iter().any(|e| e.contains(said)),
            "{name}: {errors:#?}\n{}",
            agent.logs()
        );
    }
    assert!(
        !running(&marker),
        "the fork bomb's processes outlived their run"
    );

    assert!(!running(&daemon), "a daemon outlived its run");

    // The runner is fit: the next comparison on it completes and says what head does.
    let (path, base, head) = limited_repo(&dir.path().join("plain"), "true");
    let req = BenchRepo { path, base, head }.comparison(12, Vec::new());
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, Duration::from_secs(120), &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
    let cpu = status
        .runners
        .iter()
        .find(|r| r.headline)
        .unwrap()
        .report
        .benchmarks
        .iter()
        .find(|b| b.name == "command" && b.metric == "cpu_time")
        .cloned()
        .unwrap();
    assert_eq!(cpu.verdict, VerdictKind::Slower, "{cpu:?}");
    assert!(
        agent.logged("resource limits of each build and run"),
        "{}",
        agent.logs()
    );
}

/// A tmpfs mounted on `dir` (root only), unmounted on drop: an agent's work dir of known size.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A head that writes 1 MiB files in its worktree, each far under the file-size limit, on an
/// agent whose work dir is a 512 MiB disk of its own and whose disk limit is 128 MiB: the job
/// fails at the disk limit, what the head wrote is removed with its worktrees, the agent stays
/// up, and the next job on it completes.
#[tokio::test]
async fn a_head_filling_its_disk_with_small_files_is_stopped_and_cleaned_away() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = dir.path().join("agent-disky");
    std::fs::create_dir_all(&work).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512m", "tmpfs"])
        .arg(&work)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and may mount a tmpfs"
        );
        eprintln!("skipped: cannot mount a tmpfs here (not root?)");
        return;
    }
    let _disk = Tmpfs(work.clone());
    let db = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let token = add_runner(&db, "disky");
    let agent = AgentProcess::spawn(
        "disky",
        &server,
        &token,
        dir.path(),
        &["--sandbox", "bwrap", "--limit-disk", "128MiB"],
    );
    let (path, base, head) = limited_repo(
        &dir.path().join("hostile-disk"),
        "i=0; while [ $i -lt 1024 ]; do dd if=/dev/zero of=f$i bs=1M count=1 2>/dev/null; \
         i=$((i+1)); sleep 0.01; done",
    );
    let req = BenchRepo { path, base, head }.comparison(4, Vec::new());
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, Duration::from_secs(120), &[&agent]).await;
    assert_eq!(status.state, "failed", "{status:?}\n{}", agent.logs());
    let errors = job_errors(&db, created.id).await;
    assert!(
        errors
            .iter()
            .any(|e| e.contains("stopped at the disk limit (")),
        "{errors:#?}\n{}",
        agent.logs()
    );
    // Its worktrees were removed (the runner's A/A calibration may have made fresh ones since):
    // none of the head's files is left on the disk.
    let du = std::process::Command::new("du")
        .args(["-sm"])
        .arg(&work)
        .output()
        .unwrap();
    let used: u64 = String::from_utf8_lossy(&du.stdout)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        used < 16,
        "{used} MiB left in the work dir\n{}",
        agent.logs()
    );

    let (path, base, head) = limited_repo(&dir.path().join("plain"), "true");
    let req = BenchRepo { path, base, head }.comparison(4, Vec::new());
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, Duration::from_secs(120), &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
}

/// An agent whose work dir's disk is full takes no job (it would fail at once and be given back,
/// again and again, until its attempts ran out); once the disk has room, the job runs on its
/// first attempt.
#[tokio::test]
async fn an_agent_whose_disk_is_full_takes_no_job_until_it_has_room() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = dir.path().join("agent-full");
    std::fs::create_dir_all(&work).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256m", "tmpfs"])
        .arg(&work)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and may mount a tmpfs"
        );
        eprintln!("skipped: cannot mount a tmpfs here (not root?)");
        return;
    }
    let _disk = Tmpfs(work.clone());
    let fill = work.join("fill");
    let filled = std::process::Command::new("fallocate")
        .args(["-l", "250MiB"])
        .arg(&fill)
        .status()
        .unwrap();
    assert!(filled.success());
    let db = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let token = add_runner(&db, "full");
    let agent = AgentProcess::spawn("full", &server, &token, dir.path(), &[]);
    let (path, base, head) = limited_repo(&dir.path().join("plain"), "true");
    let req = BenchRepo { path, base, head }.comparison(4, Vec::new());
    let created = create_comparison(&server, &req).await;
    crate::support::wait_until(
        "the agent to hold off",
        Duration::from_secs(30),
        async || {
            if agent.logged("not taking jobs until it has room") {
                Ok(())
            } else {
                Err(agent.logs())
            }
        },
    )
    .await;
    let attempts = || async {
        use sqlx::Connection;
        let mut c = sqlx::SqliteConnection::connect(&db).await.unwrap();
        sqlx::query_scalar::<_, i64>("SELECT MAX(attempts) FROM jobs WHERE comparison_id = ?")
            .bind(created.id)
            .fetch_one(&mut c)
            .await
            .unwrap()
    };
    assert_eq!(attempts().await, 0, "{}", agent.logs());

    std::fs::remove_file(&fill).unwrap();
    let status = wait_finished(&server, created.id, Duration::from_secs(120), &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
    assert_eq!(attempts().await, 1, "{}", agent.logs());
    assert!(agent.logged("has room again"), "{}", agent.logs());
}

/// A repository whose head does three times base's work after running `attack` (base runs
/// nothing else).
fn limited_repo(path: &Path, attack: &str) -> (PathBuf, String, String) {
    std::fs::create_dir_all(path).unwrap();
    std::fs::write(
        path.join("bench.sh"),
        "#!/bin/sh\n[ -f attack.sh ] && { sh attack.sh || exit $?; }\n\
         exec \"$BENCHGATE_BIN\" spin --iterations \"$(cat iterations)\"\n",
    )
    .unwrap();
    std::fs::write(path.join("iterations"), BASE_ITERATIONS.to_string()).unwrap();
    git(path, &["init", "-q"]);
    git(path, &["add", "."]);
    git(path, &["commit", "-qm", "base"]);
    let base = git(path, &["rev-parse", "HEAD"]);
    std::fs::write(path.join("iterations"), HEAD_ITERATIONS.to_string()).unwrap();
    std::fs::write(path.join("attack.sh"), attack).unwrap();
    git(path, &["add", "."]);
    git(path, &["commit", "-qm", "head: more work, and a hog"]);
    let head = git(path, &["rev-parse", "HEAD"]);
    (path.to_path_buf(), base, head)
}

/// Whether a process whose command line matches `pattern` runs.
fn running(pattern: &str) -> bool {
    let found = std::process::Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap();
    !found.stdout.is_empty()
}
