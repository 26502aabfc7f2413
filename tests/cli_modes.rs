//! The gate under per-process modes, through `benchgate compare --format raw` as a user runs it
//! (docs/statistics.md §4c, §4d): each side's run command prints the next value of a file of
//! run values drawn from one shape (real processes, the real binary; the values are drawn, so a
//! session is the same on every machine). Quick cases here; the full table is the
//! `mode_gate` example, and `rare_slow_runs_table` (ignored) runs 200 sessions a case.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::BIN;

/// Reproducible draws (SplitMix64), no dependency.
struct Draws(u64);

impl Draws {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (((z ^ (z >> 31)) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn student_t3(&mut self) -> f64 {
        let z = self.normal();
        let chi: f64 = (0..3).map(|_| self.normal().powi(2)).sum();
        z / (chi / 3.0).sqrt() / 3f64.sqrt()
    }
}

/// How one process's value comes out; times in µs around 100.
#[derive(Clone, Copy)]
enum Shape {
    Normal,
    LogNormal,
    StudentT3,
    /// The machine drifts 0.1% a run, on both sides alike.
    Drift,
    /// One process in `1/p` slow by `ratio`, on this side.
    Modes {
        p: f64,
        ratio: f64,
    },
}

/// `runs` values of one side: 2% spread within a mode, `factor` on every run.
fn side(shape: Shape, factor: f64, runs: usize, seed: u64) -> Vec<f64> {
    let mut d = Draws(seed);
    (0..runs)
        .map(|k| {
            let noise = match shape {
                Shape::LogNormal => {
                    let e = std::f64::consts::E;
                    (d.normal().exp() - e.sqrt()) / ((e - 1.0) * e).sqrt()
                }
                Shape::StudentT3 => d.student_t3(),
                _ => d.normal(),
            };
            let mut v = 100.0 * factor * (1.0 + 0.02 * noise).max(0.5);
            match shape {
                // Two values per round (base and head) and a warm-up round: runs ≈ rounds.
                Shape::Drift => v *= (0.001 * k as f64).exp(),
                Shape::Modes { p, ratio } if d.uniform() < p => v *= ratio,
                _ => {}
            }
            v
        })
        .collect()
}

/// A run command that prints the next value of `values` each time it runs.
fn emitter(dir: &Path, name: &str, values: &[f64]) -> String {
    let file: PathBuf = dir.join(format!("{name}.values"));
    let text: String = values.iter().map(|v| format!("{v:.4}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let pos = dir.join(format!("{name}.pos"));
    format!(
        "n=$(cat {pos} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {pos}; sed -n \"${{n}}p\" {file}",
        pos = pos.display(),
        file = file.display()
    )
}

/// One `compare --format raw` session of `base` against `head` values, with `extra` flags;
/// its output and its one row.
fn session(base: &[f64], head: &[f64], extra: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (b, h) = (
        emitter(dir.path(), "base", base),
        emitter(dir.path(), "head", head),
    );
    let mut args = vec![
        "compare",
        "--shell",
        "--base",
        &b,
        "--head",
        &h,
        "--format",
        "raw",
        "--json",
        "--max-rounds",
        "200",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(BIN)
        .args(&args)
        .output()
        .expect("run benchgate");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let row = report["benchmarks"][0].clone();
    (out, row)
}

fn verdict(row: &serde_json::Value) -> &str {
    row["verdict"].as_str().unwrap_or("none")
}

fn passed(row: &serde_json::Value) -> bool {
    ["not_slower", "equivalent", "faster"].contains(&verdict(row))
}

/// Enough values for 200 rounds, the warm-up and an A/A calibration.
const RUNS: usize = 520;

/// A head whose slow path one process in 20 hits (×2.5), 6% slower on average: on the calm
/// rounds before its first slow run the interval alone passed it ("not slower than +5%") in
/// most sessions; the tail guard holds the pass until such a mode would have shown, and then
/// its runs count.
#[test]
fn a_head_that_adds_rare_slow_runs_is_not_passed() {
    let location = 1.06f64.ln() - 0.05 * 2.5f64.ln();
    for seed in 1..=4u64 {
        let base = side(Shape::Normal, 1.0, RUNS, seed);
        let head = side(
            Shape::Modes {
                p: 0.05,
                ratio: 2.5,
            },
            location.exp(),
            RUNS,
            1000 + seed,
        );
        let (out, row) = session(&base, &head, &[]);
        assert!(!passed(&row), "seed {seed}: passed: {row}");
        assert_ne!(out.status.code(), Some(0), "seed {seed}: {row}");
        // Without the guard the same values pass on the calm early rounds.
        if seed == 1 {
            let (_, unguarded) = session(&base, &head, &["--rare-slow-runs", "off"]);
            assert!(
                passed(&unguarded) && unguarded["n"].as_u64().unwrap() < 40,
                "{unguarded}"
            );
        }
    }
}

/// One process in ten 40% slower on head only, at +6% of the mean: not passed either, and the
/// row says which side ran in the slow mode.
#[test]
fn head_only_slow_runs_are_named_and_counted() {
    let location = 1.06f64.ln() - 0.10 * 1.4f64.ln();
    let base = side(Shape::Normal, 1.0, RUNS, 7);
    let head = side(
        Shape::Modes {
            p: 0.10,
            ratio: 1.4,
        },
        location.exp(),
        RUNS,
        8,
    );
    let (_, row) = session(&base, &head, &[]);
    assert!(!passed(&row), "{row}");
    assert_eq!(row["modes"]["base_slow"], 0, "{row}");
    assert!(row["modes"]["head_slow"].as_u64().unwrap() > 0, "{row}");
    let hints = row["warnings"].to_string();
    assert!(
        hints.contains("head ran") && hints.contains("base none"),
        "{hints}"
    );
}

/// One process in six 30% slower on both sides, the same code: the gate judges the typical run
/// (not blown wide by the mix), passes within the guard's runs, and says the machine or the
/// benchmark is bistable. A typical run 8% slower under the same mix fails in a few rounds.
#[test]
fn a_mode_both_sides_show_is_judged_on_the_typical_run() {
    let bistable = Shape::Modes {
        p: 1.0 / 6.0,
        ratio: 1.3,
    };
    let (out, row) = session(
        &side(bistable, 1.0, RUNS, 21),
        &side(bistable, 1.0, RUNS, 22),
        &[],
    );
    assert!(passed(&row), "{row}");
    assert_eq!(out.status.code(), Some(0), "{row}");
    assert!(row["n"].as_u64().unwrap() <= 90, "{row}");
    assert_eq!(row["modes"]["typical_run"], true, "{row}");
    let hints = row["warnings"].to_string();
    assert!(
        hints.contains("on both sides") && hints.contains("bistable"),
        "{hints}"
    );

    let (out, row) = session(
        &side(bistable, 1.0, RUNS, 23),
        &side(bistable, 1.08, RUNS, 24),
        &[],
    );
    assert_eq!(verdict(&row), "slower", "{row}");
    assert_eq!(out.status.code(), Some(1), "{row}");
    assert!(row["n"].as_u64().unwrap() <= 30, "{row}");
}

/// The shapes without modes: an unchanged head is not called slower, a head 8% slower is, on
/// normal, skewed, heavy-tailed and drifting runs alike.
#[test]
fn calm_shapes_keep_both_errors() {
    for (i, shape) in [
        Shape::Normal,
        Shape::LogNormal,
        Shape::StudentT3,
        Shape::Drift,
    ]
    .into_iter()
    .enumerate()
    {
        let seed = 40 + 2 * i as u64;
        let (_, same) = session(
            &side(shape, 1.0, RUNS, seed),
            &side(shape, 1.0, RUNS, seed + 1),
            &[],
        );
        assert_ne!(verdict(&same), "slower", "shape {i}: {same}");
        let (_, slower) = session(
            &side(shape, 1.0, RUNS, seed + 100),
            &side(shape, 1.08, RUNS, seed + 101),
            &[],
        );
        assert_eq!(verdict(&slower), "slower", "shape {i}: {slower}");
    }
}

/// Sessions of a head 2× slower than base on a runner whose A/A floor measured 3% per pair
/// (30 A/A rounds in the same session): the share called slower by round 3.
fn doubled_on_a_floor(sessions: u64) -> f64 {
    let mut by_three = 0;
    for seed in 0..sessions {
        // 3% per pair: 2.1% per run.
        let base: Vec<f64> = {
            let mut d = Draws(500 + seed);
            (0..RUNS)
                .map(|_| 100.0 * (0.0212 * d.normal()).exp())
                .collect()
        };
        let head: Vec<f64> = {
            let mut d = Draws(9000 + seed);
            (0..RUNS)
                .map(|_| 200.0 * (0.0212 * d.normal()).exp())
                .collect()
        };
        let (_, row) = session(&base, &head, &["--aa-rounds", "30"]);
        if verdict(&row) == "slower" && row["n"].as_u64().unwrap() <= 3 {
            by_three += 1;
        }
    }
    by_three as f64 / sessions as f64
}

#[test]
fn a_head_twice_as_slow_is_called_slower_within_three_rounds_on_a_floor() {
    assert_eq!(doubled_on_a_floor(5), 1.0);
}

/// The count: ≥ 95% of 200 sessions (`cargo test --test integration -- --ignored
/// rare_slow_runs_table --nocapture`, ~6 min).
#[test]
#[ignore = "200 sessions: minutes; the quick case above runs in CI"]
fn rare_slow_runs_table() {
    let share = doubled_on_a_floor(200);
    eprintln!(
        "2× slower on a 3% floor: slower within 3 rounds in {:.1}% of 200 sessions",
        100.0 * share
    );
    assert!(share >= 0.95, "{share}");
}
