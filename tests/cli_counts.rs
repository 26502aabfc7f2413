//! The exact tier through `benchgate compare --counts instructions`, as a user runs it: the real
//! binary counting real processes (`benchgate spin`, whose instructions grow by a fixed number a
//! loop iteration) on each counter this machine has. A counter it lacks is skipped with the
//! reason, never passed silently.

use std::process::Command;

use serde_json::Value;

use crate::support::BIN;

/// `compare --counts instructions --json` of two commands on `counter`, with `extra` flags.
fn compare(counter: &str, base: &str, head: &str, extra: &[&str]) -> (Value, i32) {
    let out = Command::new(BIN)
        .args([
            "compare",
            "--counts",
            "instructions",
            "--json",
            "--rounds",
            "2",
        ])
        .args(["--rare-slow-runs", "off", "--base", base, "--head", head])
        .args(extra)
        .env("BENCHGATE_COUNTER", counter)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    (report, out.status.code().unwrap_or(-1))
}

/// The `metric` row of `report`.
fn row<'a>(report: &'a Value, metric: &str) -> &'a Value {
    report["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} row: {report:#}"))
}

/// Why `counter` cannot count here, if it cannot. Valgrind is installed by `.ci/run`, so in CI
/// its absence fails loudly instead of skipping; a PMU is the machine's to have or not.
fn unavailable(counter: &str) -> Option<String> {
    let why = probe(counter);
    if let Some(why) = &why
        && counter == "valgrind"
        && std::env::var_os("CI").is_some()
    {
        panic!("CI has no valgrind ({why}): .ci/run installs it");
    }
    why
}

fn probe(counter: &str) -> Option<String> {
    let probe = match counter {
        "perf" => Command::new("perf")
            .args(["stat", "-x,", "-e", "instructions:u", "--", "true"])
            .output(),
        _ => Command::new("valgrind").arg("--version").output(),
    };
    match probe {
        Err(e) => Some(format!("{counter} cannot run: {e}")),
        Ok(o) if counter == "perf" => {
            let text = String::from_utf8_lossy(&o.stderr);
            (!o.status.success()
                || text.contains("<not supported>")
                || text.contains("<not counted>"))
            .then(|| format!("no PMU perf can read: {}", text.trim()))
        }
        Ok(o) => (!o.status.success()).then(|| "valgrind --version failed".to_owned()),
    }
}

fn spin(iterations: u64) -> String {
    format!("{BIN} spin --iterations {iterations}")
}

/// Each added iteration adds the same instructions: the steps from 100k to 200k iterations and
/// from 200k to 300k are a whole number of instructions an iteration (up to the few of printing
/// another checksum), both runs of each side agree, so the rows are exact, and one program
/// counts the same in two sessions.
#[test]
fn a_loop_of_known_length_is_counted_exactly_on_each_counter() {
    for counter in ["perf", "valgrind"] {
        if let Some(why) = unavailable(counter) {
            eprintln!("skipped on {counter}: {why}");
            continue;
        }
        let (first, _) = compare(counter, &spin(100_000), &spin(200_000), &[]);
        let (second, _) = compare(counter, &spin(200_000), &spin(300_000), &[]);
        // Centres are geometric means of equal counts: whole numbers up to float rounding.
        let count = |r: &Value, side: &str| row(r, "instructions")[side].as_f64().unwrap().round();
        for r in [&first, &second] {
            assert_eq!(
                row(r, "instructions")["verdict"],
                "exact",
                "{counter}: {r:#}"
            );
        }
        let steps = [
            count(&first, "head_center") - count(&first, "base_center"),
            count(&second, "head_center") - count(&second, "base_center"),
        ];
        // The same 100k iterations; only printing the checksum, a number of other digits,
        // differs by a few instructions.
        assert!(steps[0] > 100_000.0, "{counter}: {steps:?}");
        assert!((steps[0] - steps[1]).abs() <= 50.0, "{counter}: {steps:?}");
        let per_iteration = (steps[0] / 100_000.0).round();
        assert!(
            (steps[0] - per_iteration * 100_000.0).abs() <= 50.0,
            "{counter}: {steps:?} is not {per_iteration} instructions an iteration"
        );
        assert_eq!(
            count(&first, "head_center"),
            count(&second, "base_center"),
            "{counter}: 200k iterations count the same in two sessions"
        );
    }
}

/// Work that ends on the clock, on two threads: its counts differ between runs, so the row is
/// read as a timing with the reason, and `--gate-on instructions` gates the benchmark's time.
#[test]
fn a_threaded_count_that_varies_is_demoted_to_a_timing_with_the_reason() {
    let counter = "valgrind";
    if let Some(why) = unavailable(counter) {
        eprintln!("skipped on {counter}: {why}");
        return;
    }
    let threaded = format!("{BIN} spin --threads 2 --for-ms 60");
    let (report, _) = compare(
        counter,
        &threaded,
        &threaded,
        &["--gate-on", "instructions"],
    );
    let counted = row(&report, "instructions");
    assert_ne!(counted["verdict"], "exact", "{counted:#}");
    assert_eq!(
        counted["n"], 6,
        "counted again up to 6 runs a side: {counted:#}"
    );
    assert_eq!(counted["gated"], false, "{counted:#}");
    let warnings = counted["warnings"].to_string();
    assert!(warnings.contains("not deterministic"), "{warnings}");
    assert!(
        warnings.contains("judges this benchmark on its time"),
        "{warnings}"
    );
    assert_eq!(row(&report, "wall_time")["gated"], true, "{report:#}");
}

/// A harness that picks its own iteration counts is refused with the reason; one that can be
/// told a count needs the command that does.
#[test]
fn counting_a_harness_that_cannot_fix_its_iterations_is_refused() {
    let out = Command::new(BIN)
        .args([
            "compare",
            "--counts",
            "instructions",
            "--format",
            "criterion",
        ])
        .args(["--base", "true", "--head", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--profile-time fixes a time, not a count"),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args(["compare", "--counts", "instructions", "--format", "go"])
        .args(["--base", "true", "--head", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("give --count-run") || stderr.contains("--count-run"),
        "{stderr}"
    );
    assert!(stderr.contains("-benchtime 1000x"), "{stderr}");
}
