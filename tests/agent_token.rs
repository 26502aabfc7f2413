//! The runner token stays off the agent's command line: `--token-file` works end to end and
//! leaves `/proc/PID/cmdline` clean, `--token` on the command line is refused, and a token
//! file that is empty, unreadable or open to others is reported clearly.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::agent::{
    AgentProcess, BenchRepo, FINISH, TokenVia, add_runner, create_comparison, spawn_server_at,
    wait_finished, write_token_file,
};
use crate::support::{BIN, measuring_turn, sqlite_url};

/// Runs `benchgate agent` against a port nothing listens on, so it can only fail before
/// connecting; `env` is the whole token environment it gets.
fn agent_cli(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(["agent", "--server", "http://127.0.0.1:9", "--work-dir"])
        .arg(dir.join("work"))
        .args(args)
        .env_remove("BENCHGATE_TOKEN")
        .env_remove("BENCHGATE_TOKEN_FILE")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run benchgate agent")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn an_agent_with_a_token_file_finishes_a_job_and_its_command_line_holds_no_token() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let repo = BenchRepo::create(dir.path());
    let token = add_runner(&db, "filed");
    let file = dir.path().join("filed.token");
    write_token_file(&file, &token, 0o600);

    let mut agent = AgentProcess::spawn_with(
        "filed",
        &server.url(""),
        TokenVia::File(&file),
        dir.path(),
        &[],
    );
    agent.wait_for_log("machine fingerprint", FINISH);
    let cmdline = agent.cmdline();
    assert!(cmdline.contains("--token-file"), "{cmdline}");
    assert!(
        !cmdline.contains(&token),
        "the token is on the command line"
    );

    let created = create_comparison(&server, &repo.comparison(4, Vec::new())).await;
    let status = wait_finished(&server, created.id, FINISH, &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
    let headline = status.runners.iter().find(|r| r.headline).unwrap();
    assert_eq!(headline.runner, "filed");
    assert!(!agent.logged("readable by group"), "{}", agent.logs());
    assert!(!agent.logs().contains(&token), "the token reached the log");
}

#[tokio::test]
async fn a_token_file_readable_by_others_is_used_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let token = add_runner(&db, "careless");
    let file = dir.path().join("careless.token");
    write_token_file(&file, &token, 0o644);

    let mut agent = AgentProcess::spawn_with(
        "careless",
        &server.url(""),
        TokenVia::File(&file),
        dir.path(),
        &[],
    );
    agent.wait_for_log("agent starting", FINISH);
    let logs = agent.logs();
    let warning = logs
        .lines()
        .find(|l| l.contains("readable by group or others"))
        .unwrap_or_else(|| panic!("no warning:\n{logs}"));
    assert!(
        warning.contains("careless.token") && warning.contains("644"),
        "{warning}"
    );
    assert!(!logs.contains(&token));
}

#[test]
fn a_token_on_the_command_line_is_refused_with_exit_code_2_and_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--token", "tok-on-argv-secret"][..],
        &["--token=tok-on-argv-secret"][..],
    ] {
        let out = agent_cli(dir.path(), args, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--token-file") && err.contains("BENCHGATE_TOKEN"),
            "{err}"
        );
        assert!(
            !err.contains("tok-on-argv-secret"),
            "the refusal echoes the token: {err}"
        );
    }
}

#[test]
fn an_empty_unreadable_missing_or_doubled_token_is_a_clear_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.token");
    std::fs::write(&empty, " \n\t\n").unwrap();
    let missing = dir.path().join("missing.token");
    let not_a_file = dir.path().to_path_buf();
    let given = dir.path().join("given.token");
    write_token_file(&given, "tok", 0o600);
    let path = |p: &Path| p.display().to_string();

    // (flags, token environment, what the error must say)
    type Case<'a> = (Vec<String>, Vec<(&'a str, String)>, Vec<String>);
    let cases: Vec<Case> = vec![
        (
            vec!["--token-file".into(), path(&empty)],
            vec![],
            vec![path(&empty), "empty".into()],
        ),
        (
            vec![],
            vec![("BENCHGATE_TOKEN_FILE", path(&empty))],
            vec![path(&empty), "empty".into()],
        ),
        (
            vec!["--token-file".into(), path(&missing)],
            vec![],
            vec![path(&missing), "cannot read".into()],
        ),
        (
            vec!["--token-file".into(), path(&not_a_file)],
            vec![],
            vec![path(&not_a_file), "cannot read".into()],
        ),
        (
            vec![],
            vec![],
            vec!["no runner token".into(), "--token-file".into()],
        ),
        (
            vec!["--token-file".into(), path(&given)],
            vec![("BENCHGATE_TOKEN", "tok".into())],
            vec!["keep one".into()],
        ),
        (
            vec![],
            vec![("BENCHGATE_TOKEN", "  ".into())],
            vec!["empty".into()],
        ),
    ];
    for (args, env, needles) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let out = agent_cli(dir.path(), &args, &env);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {err}");
        for needle in &needles {
            assert!(
                err.contains(needle.as_str()),
                "{args:?} {env:?}: no {needle:?} in {err}"
            );
        }
    }
}

/// Fail closed: where bubblewrap does not work (here: not on the PATH), the default `auto`
/// and `bwrap` both refuse to start, with the reason and the fix; only `--sandbox none`, said
/// explicitly, gets past the sandbox decision (to the connection, which fails here).
#[test]
fn without_a_working_sandbox_the_agent_refuses_to_start_unless_told_none() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.token");
    write_token_file(&file, "tok", 0o600);
    let token = file.to_str().unwrap();
    let no_bwrap = [("PATH", "/nonexistent")];
    for mode in [None, Some("auto"), Some("bwrap")] {
        let mut args = vec!["--token-file", token];
        if let Some(mode) = mode {
            args.extend(["--sandbox", mode]);
        }
        let out = agent_cli(dir.path(), &args, &no_bwrap);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{mode:?}: {err}");
        let said = format!("--sandbox {}:", mode.unwrap_or("auto"));
        for needle in [
            said.as_str(),
            "apt-get install bubblewrap",
            "--sandbox none",
        ] {
            assert!(err.contains(needle), "{mode:?}: no {needle:?} in {err}");
        }
        assert!(!err.contains("agent starting"), "{mode:?}: {err}");
    }
    // `none` starts (and keeps trying a server that is not there): stopped once it has said so.
    let mut command = Command::new(BIN);
    command
        .args(["agent", "--server", "http://127.0.0.1:9", "--work-dir"])
        .arg(dir.path().join("work"))
        .args(["--token-file", token, "--sandbox", "none"])
        .env_remove("BENCHGATE_TOKEN")
        .env_remove("BENCHGATE_TOKEN_FILE")
        .env("NO_COLOR", "1")
        .env("PATH", "/nonexistent");
    let err = start_up_log(&mut command);
    assert!(err.contains("--sandbox none: PR builds and runs"), "{err}");
    assert!(!err.contains("apt-get install bubblewrap"), "{err}");
}

/// The shipped unit's command line as the unit runs it: a non-root user, settings from the
/// environment file's variables. The start-up log names the limits each build and run gets, and
/// never claims cgroups the user cannot make groups in (a `benchgate/` that root made earlier is
/// there but not writable): on a host without a delegated cgroup v2, as here, per-process
/// rlimits with the fix named; where the unit's `Delegate=` gives one, cgroup v2.
#[test]
fn the_systemd_unit_s_command_line_names_the_limits_it_gets_as_a_non_root_user() {
    if !nix_is_root() {
        eprintln!("skipped: starting the agent as another user needs root");
        return;
    }
    let unit = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("deploy/systemd/benchgate-agent.service"),
    )
    .unwrap();
    let key = |name: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("the unit has no {name}="))
            .to_owned()
    };
    assert_eq!(key("Delegate"), "memory pids");
    assert_eq!(key("User"), "benchgate");
    let exec = key("ExecStart");
    let args: Vec<&str> = exec.split_whitespace().skip(1).collect();
    assert_eq!(
        args,
        ["agent"],
        "settings come from the environment file, never arguments"
    );

    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let token = dir.path().join("agent.token");
    write_token_file(&token, "tok", 0o600);
    // The unit's user: `nobody` stands in for `benchgate`, owning what the unit's user owns.
    let bin = dir.path().join("benchgate");
    std::fs::copy(BIN, &bin).unwrap();
    for path in [dir.path(), &work, &token] {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
    // What root made before (an earlier agent as root): there, but not the user's to write.
    let _ = std::fs::create_dir("/sys/fs/cgroup/memory/benchgate");
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&bin)
        .args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir.path())
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .env("BENCHGATE_SERVER", "http://127.0.0.1:9")
        .env("BENCHGATE_TOKEN_FILE", &token)
        .env("BENCHGATE_WORK_DIR", &work)
        // The sandbox's own start-up is tested above; here only the limits are.
        .env("BENCHGATE_SANDBOX", "none");
    let err = start_up_log(&mut command);
    let limits = err
        .lines()
        .find(|l| l.contains("limits="))
        .unwrap_or_else(|| panic!("no limits in the start-up log:\n{err}"));
    if limits.contains("limits=cgroup v2") {
        assert!(err.contains("cgroup v2 delegated to the agent"), "{err}");
    } else {
        assert!(
            limits.contains("limits=rlimits: 4096 processes"),
            "{limits}"
        );
        assert!(limits.contains("Delegate=memory pids"), "{limits}");
    }
    assert!(err.contains("agent starting"), "{err}");
}

/// Whether the test runs as root (`/proc/self` belongs to the process's effective user).
fn nix_is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// What an agent that keeps running (its server is not there) logs in its first two seconds.
fn start_up_log(command: &mut Command) -> String {
    let mut child = command
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        text
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let _ = child.kill();
    let _ = child.wait();
    reader.join().unwrap()
}
