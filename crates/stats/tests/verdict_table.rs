//! End-to-end verdicts from samples: one row per situation a PR comment must say plainly.

use benchgate_stats::{AnalysisOptions, NoiseFloor, Verdict, VerdictKind, analyze_pairs};

/// Pairs whose head/base ratio is `ratio` times a fixed ±`wobble` pattern.
fn pairs(n: usize, ratio: f64, wobble: f64) -> (Vec<f64>, Vec<f64>) {
    let pattern = [1.0, -0.6, 0.3, -1.0, 0.8, -0.2, 0.5, -0.7];
    let base: Vec<f64> = (0..n).map(|i| 100.0 + (i % 3) as f64).collect();
    let head = base
        .iter()
        .enumerate()
        .map(|(i, b)| b * ratio * (wobble * pattern[i % pattern.len()]).exp())
        .collect();
    (base, head)
}

/// One row: what the data shows, the samples, the verdict and whether it is practical.
type Case = (&'static str, (Vec<f64>, Vec<f64>), VerdictKind, bool);

#[test]
fn verdict_table() {
    let opts = AnalysisOptions::default();
    let cases: [Case; 6] = [
        (
            "clear regression",
            pairs(30, 1.05, 0.01),
            VerdictKind::Slower,
            true,
        ),
        (
            "clear speed-up",
            pairs(30, 0.95, 0.01),
            VerdictKind::Faster,
            true,
        ),
        (
            "small but real regression",
            pairs(60, 1.004, 0.002),
            VerdictKind::Slower,
            false,
        ),
        (
            "no change, tight",
            pairs(60, 1.0, 0.003),
            VerdictKind::Equivalent,
            false,
        ),
        (
            "too few rounds",
            pairs(6, 1.01, 0.03),
            VerdictKind::NoResultYet,
            false,
        ),
        (
            "noise far above the margin",
            pairs(10, 1.0, 0.5),
            VerdictKind::BelowResolution,
            false,
        ),
    ];
    for (what, (base, head), kind, practical) in cases {
        let a = analyze_pairs(&base, &head, &opts, None).unwrap();
        let r = a.to_result(what, "time", "ns");
        assert_eq!(r.verdict, kind, "{what}: {:?}", a.verdict);
        assert_eq!(r.practical, practical, "{what}");
        assert_eq!(
            r.rounds_needed.is_some(),
            kind == VerdictKind::NoResultYet,
            "{what}"
        );
    }
}

#[test]
fn deterministic_counters_are_exact() {
    let base = [1000.0; 5];
    let head = [1020.0; 5];
    let a = analyze_pairs(&base, &head, &AnalysisOptions::default(), None).unwrap();
    assert_eq!(a.verdict, Verdict::Exact);
    assert!((a.change_pct - 2.0).abs() < 1e-9);
    let r = a.to_result("allocs", "allocs", "count");
    assert_eq!(r.interval_pct[0], r.interval_pct[1]);
    assert!(r.practical);
    let same = analyze_pairs(&base, &base, &AnalysisOptions::default(), None).unwrap();
    assert_eq!(same.verdict, Verdict::Exact);
    assert!(!same.is_practical());
}

#[test]
fn a_runner_bias_widens_the_margin() {
    // Sessions whose means sit 3% apart: tau_b dominates, so M grows past the 1% policy.
    let sessions = [
        vec![0.03, 0.031, 0.029, 0.030],
        vec![-0.03, -0.029, -0.031, -0.030],
        vec![0.0, 0.001, -0.001, 0.0],
    ];
    let floor = NoiseFloor::from_sessions(&sessions).unwrap();
    assert!(floor.tau_b > 0.025);
    let (base, head) = pairs(60, 1.02, 0.003);
    let opts = AnalysisOptions::default();
    let without = analyze_pairs(&base, &head, &opts, None).unwrap();
    let with = analyze_pairs(&base, &head, &opts, Some(&floor)).unwrap();
    assert_eq!(without.verdict, Verdict::Slower { practical: true });
    // A 2% change is real but inside this runner's between-session bias.
    assert_eq!(with.verdict, Verdict::Slower { practical: false });
    assert!((with.margin - 2.0 * floor.tau_b).abs() < 1e-12);
}
