//! `benchgate compare` and `benchgate analyze` as a user runs them: the real binary, real
//! processes, real files.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::BIN;

/// Measuring tests take turns: side by side on a small machine they would load each other and
/// measure that instead of the commands.
fn measuring() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn benchgate(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run benchgate")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn wall_time(report: &serde_json::Value) -> &serde_json::Value {
    report["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["metric"] == "wall_time")
        .expect("a wall_time row")
}

#[test]
fn compare_finds_a_ten_percent_slower_sleep() {
    let _turn = measuring();
    let out = benchgate(&[
        "compare",
        "--base",
        "sleep 0.02",
        "--head",
        "sleep 0.022",
        // Stops as soon as it decides (about 15 rounds on a quiet machine); a loaded one needs more.
        "--max-rounds",
        "400",
        "--json",
    ]);
    let report = json(&out);
    let row = wall_time(&report);
    assert_eq!(row["verdict"], "slower", "{row}");
    let lo = row["interval_pct"][0].as_f64().unwrap();
    let hi = row["interval_pct"][1].as_f64().unwrap();
    assert!(
        lo < 10.0 && 10.0 < hi,
        "interval [{lo}, {hi}] should contain +10%"
    );
    assert_eq!(out.status.code(), Some(1), "a regression exits 1");
}

#[test]
fn compare_of_a_command_with_itself_claims_nothing() {
    let _turn = measuring();
    // One session may claim a change with probability up to alpha (that is what 0.05 means);
    // a second claim in two more sessions would point at a biased tool (p ≈ 2·alpha²).
    let session = || {
        let out = benchgate(&[
            "compare",
            "--base",
            "sleep 0.02",
            "--head",
            "sleep 0.02",
            "--json",
            "--max-rounds",
            "20",
        ]);
        let report = json(&out);
        let verdict = wall_time(&report)["verdict"].as_str().unwrap().to_string();
        let claimed = ["slower", "faster"].contains(&verdict.as_str());
        if !claimed {
            assert_eq!(out.status.code(), Some(0), "{verdict}");
        }
        (claimed, verdict)
    };
    let (claimed, verdict) = session();
    if claimed {
        eprintln!("A/A session claimed {verdict}; two more sessions must claim nothing");
        for _ in 0..2 {
            let (again, verdict) = session();
            assert!(!again, "A/A claimed {verdict} twice in three sessions");
        }
    }
}

#[test]
fn compare_reports_a_failing_command_as_a_measurement_error() {
    let out = benchgate(&[
        "compare",
        "--shell",
        "--base",
        "true",
        "--head",
        "echo broken build >&2; exit 3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken build"),
        "stderr tail shown: {stderr}"
    );
}

#[test]
fn analyze_reads_raw_files_and_prints_stable_json() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.txt");
    let head = dir.path().join("head.txt");
    // The worked example of docs/statistics.md.
    std::fs::write(
        &base,
        "102.1\n99.8\n101.5\n100.2\n98.9\n100.7\n101.9\n99.5\n100.4\n100.0\n",
    )
    .unwrap();
    std::fs::write(
        &head,
        "104.0\n102.3\n103.1\n104.9\n101.2\n103.5\n103.0\n103.8\n102.2\n113.0\n",
    )
    .unwrap();
    let out = benchgate(&[
        "analyze",
        "--json",
        "--format",
        "raw",
        base.to_str().unwrap(),
        head.to_str().unwrap(),
    ]);
    let report = json(&out);
    assert_eq!(report["alpha"], 0.05);
    let row = &report["benchmarks"][0];
    assert_eq!(row["n"], 10);
    let lo = row["interval_pct"][0].as_f64().unwrap();
    let hi = row["interval_pct"][1].as_f64().unwrap();
    assert!(
        (lo - 0.712).abs() < 0.001 && (hi - 4.404).abs() < 0.001,
        "[{lo}, {hi}]"
    );
    let flo = row["fixed_interval_pct"][0].as_f64().unwrap();
    assert!((flo - 1.149).abs() < 0.001, "{flo}");
    for key in [
        "name",
        "metric",
        "unit",
        "base_center",
        "head_center",
        "change_pct",
        "verdict",
        "practical",
        "rounds_needed",
        "e_value",
    ] {
        assert!(row.get(key).is_some(), "missing {key} in {row}");
    }
}

#[test]
fn analyze_names_file_and_line_of_a_bad_value() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.txt");
    let head = dir.path().join("head.txt");
    std::fs::write(&base, "1.0\n2.0\nfast\n").unwrap();
    std::fs::write(&head, "1.0\n2.0\n3.0\n").unwrap();
    let out = benchgate(&[
        "analyze",
        "--format",
        "raw",
        base.to_str().unwrap(),
        head.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("base.txt") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn analyze_rejects_an_empty_file_and_an_unknown_format() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let p = empty.to_str().unwrap();
    let out = benchgate(&["analyze", p, p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));

    let out = benchgate(&["analyze", "--format", "nope", p, p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}

#[test]
fn analyze_pairs_real_go_benchmark_output() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/harness/tests/fixtures/aa-ab/go-bent");
    let mut files: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "go-bent fixtures present");
    let out = benchgate(&[
        "analyze",
        "--json",
        "--format",
        "go",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
    ]);
    let report = json(&out);
    assert!(!report["benchmarks"].as_array().unwrap().is_empty());
}

/// A criterion `target/criterion` directory is analysed as it is, and analyze says how it read
/// each side.
#[test]
fn analyze_reads_criterion_directories() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/harness/tests/fixtures/bench/criterion/deduplicate");
    let out = Command::new(BIN)
        .arg("analyze")
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("read as criterion (auto-detected)"),
        "{stderr}"
    );
    assert!(
        stdout.contains("get/moka get/1024 time         100"),
        "{stdout}"
    );
}
