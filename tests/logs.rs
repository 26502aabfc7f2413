//! Logs as an operator's collector reads them: the real binary with stderr on a pipe, as in a
//! log file, journald or `docker logs`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::BIN;

/// Runs `cmd` with stderr on a pipe and returns its log lines up to the first holding `needle`
/// (all of them if it exits first); the process is killed then.
fn stderr_until(cmd: &mut Command, needle: &str) -> Vec<String> {
    let mut child = cmd
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let found = line.contains(needle);
        lines.push(line);
        if found {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    lines
}

/// Logs read from a pipe (a log file, journald, `docker logs`) carry no ANSI colour codes, in
/// the default pretty format and without `NO_COLOR`.
#[test]
fn logs_to_a_pipe_have_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let seen = stderr_until(
        Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--log-format", "pretty"])
            .env(
                "BENCHGATE_DATABASE_URL",
                format!("sqlite://{}", dir.path().join("b.db").display()),
            )
            .env_remove("NO_COLOR"),
        "benchgate listening",
    );
    let logs = seen.join("\n");
    assert!(logs.contains("benchgate listening"), "{logs}");
    assert!(logs.contains(" INFO "), "pretty lines with levels: {logs}");
    assert!(
        !logs.contains("\x1b["),
        "colour codes in piped logs: {logs:?}"
    );
}

/// `benchgate agent --log-format json` writes one JSON object per line, like the server.
#[test]
fn the_agent_logs_json_lines_for_a_log_shipper() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stderr_until(
        Command::new(BIN)
            .args(["agent", "--server", "http://127.0.0.1:9", "--work-dir"])
            .arg(dir.path().join("work"))
            .args(["--sandbox", "none", "--log-format", "json"])
            .env("BENCHGATE_TOKEN", "a-token-for-the-log-test")
            .env_remove("BENCHGATE_TOKEN_FILE"),
        "agent starting",
    );
    assert!(
        lines.iter().any(|l| l.contains("agent starting")),
        "{lines:?}"
    );
    for line in &lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["fields"]["message"].is_string(), "{line}");
        assert!(!line.contains("a-token-for-the-log-test"), "{line}");
    }
}
