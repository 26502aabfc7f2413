//! `benchgate demo --exit` as a newcomer runs it: nothing set up, the real binary starts its
//! own server and agent, and prints the PR comment for a head known to be 25% slower.

use std::process::Command;

use crate::support::{BIN, measuring_turn_blocking};

/// The `[lo%, hi%]` interval of the comment's wall-time row.
fn wall_time_row(comment: &str) -> &str {
    comment
        .lines()
        .find(|l| l.starts_with('|') && l.contains("wall\\_time"))
        .unwrap_or_else(|| panic!("no wall_time row in:\n{comment}"))
}

fn interval(row: &str) -> (f64, f64) {
    let inside = row
        .split('[')
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no interval in {row}"));
    let mut bounds = inside.split(',').map(|b| {
        b.trim()
            .trim_end_matches('\\')
            .trim_end_matches('%')
            .parse::<f64>()
            .expect(b)
    });
    (bounds.next().unwrap(), bounds.next().unwrap())
}

#[test]
fn demo_reports_the_known_slowdown_with_an_interval_that_contains_it() {
    let _turn = measuring_turn_blocking();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args([
            "demo",
            "--exit",
            "--listen",
            "127.0.0.1:0",
            "--factor",
            "1.25",
            // It stops once decided; a loaded machine may need more than the default 60.
            "--max-rounds",
            "300",
        ])
        .arg("--dir")
        .arg(dir.path())
        .env_remove("BENCHGATE_DATABASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo failed:\n{stderr}");

    assert!(stdout.starts_with("<!-- benchgate:demo -->"), "{stdout}");
    let row = wall_time_row(&stdout);
    assert!(row.contains("**slower ("), "{row}");
    let (lo, hi) = interval(row);
    assert!(
        lo <= 25.0 && 25.0 <= hi,
        "[{lo}%, {hi}%] should contain +25%"
    );
    assert!(stdout.contains("A/A floor"), "{stdout}");
    assert!(stderr.contains("dashboard: http://127.0.0.1:"), "{stderr}");
    assert!(dir.path().join("benchgate.db").exists());
}

#[test]
fn demo_rejects_a_nonsense_factor() {
    let out = Command::new(BIN)
        .args(["demo", "--exit", "--listen", "127.0.0.1:0", "--factor", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--factor"));
}
