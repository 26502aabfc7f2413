//! The unpaired interval of two recordings keeps its level when head got noisier than base and
//! the run counts differ (docs/statistics.md §1b): simulated A/A recordings, head's spread 2–4×
//! base's, counts unequal in both directions. The pooled spread would be too narrow exactly
//! there: it is computed beside, to show the case bites.

use crate::normal::Normal;
use benchgate_stats::fixed_interval::t_quantile;
use benchgate_stats::{AnalysisOptions, MixtureBoundary, analyze_runs};

const TRIALS: usize = 2000;
const ALPHA: f64 = 0.05;
/// Spread of one base run on the log scale.
const BASE_SPREAD: f64 = 0.02;

/// Share of A/A recordings whose interval excludes zero: the engine's anytime-valid one, its
/// fixed-n (Welch t) diagnostic, and for contrast the pooled-spread t interval and the
/// anytime-valid interval with a pooled spread (what `analyze` used before).
fn false_claims(m: usize, n: usize, ratio: f64, seed: u64) -> [f64; 4] {
    let mut rng = Normal(seed);
    let opts = AnalysisOptions {
        // As `analyze` tunes by default: to the recorded runs.
        n_star: (m * n) as f64 / (m + n) as f64,
        ..AnalysisOptions::default()
    };
    let boundary = MixtureBoundary::tuned(ALPHA, opts.n_star).unwrap();
    let (mut anytime, mut fixed, mut pooled, mut pooled_anytime) = (0, 0, 0, 0);
    for _ in 0..TRIALS {
        let base: Vec<f64> = (0..m)
            .map(|_| 100.0 * (BASE_SPREAD * rng.draw()).exp())
            .collect();
        let head: Vec<f64> = (0..n)
            .map(|_| 100.0 * (ratio * BASE_SPREAD * rng.draw()).exp())
            .collect();
        let a = analyze_runs(&base, &head, &opts, None).unwrap();
        anytime += usize::from(!a.interval.contains(0.0));
        fixed += usize::from(!a.fixed_interval.contains(0.0));
        let logs = |x: &[f64]| -> (f64, f64) {
            let l: Vec<f64> = x.iter().map(|v| v.ln()).collect();
            let mean = l.iter().sum::<f64>() / l.len() as f64;
            (mean, l.iter().map(|v| (v - mean).powi(2)).sum())
        };
        let ((mb, ssb), (mh, ssh)) = (logs(&base), logs(&head));
        let nu = (m + n - 2) as f64;
        let sd = ((ssb + ssh) / nu).sqrt();
        let se = sd * (1.0 / m as f64 + 1.0 / n as f64).sqrt();
        pooled += usize::from((mh - mb).abs() > t_quantile(ALPHA, nu).unwrap() * se);
        let half = boundary.two_sample_half_width(sd, m as u64, n as u64);
        pooled_anytime += usize::from((mh - mb).abs() > half);
    }
    let share = |k: usize| k as f64 / TRIALS as f64;
    [anytime, fixed, pooled, pooled_anytime].map(share)
}

#[test]
fn a_noisier_head_with_fewer_runs_keeps_the_a_a_false_claim_rate_at_alpha() {
    let mut worst_pooled: f64 = 0.0;
    for (m, n) in [(10, 4), (4, 10), (12, 5), (6, 3), (20, 8)] {
        for ratio in [2.0, 3.0, 4.0] {
            let seed = (m * 1000 + n * 10) as u64 + ratio as u64;
            let [anytime, fixed, pooled, pooled_anytime] = false_claims(m, n, ratio, seed);
            eprintln!(
                "base {m} runs, head {n} runs, head spread {ratio}x: anytime {:.2}% (pooled \
                 {:.2}%), Welch t {:.2}%, pooled t {:.2}%",
                100.0 * anytime,
                100.0 * pooled_anytime,
                100.0 * fixed,
                100.0 * pooled
            );
            assert!(anytime <= ALPHA, "{m}/{n} at {ratio}x: {anytime}");
            // The fixed-n Welch interval is near its level (within Monte Carlo error).
            assert!(
                fixed <= ALPHA + 0.025,
                "{m}/{n} at {ratio}x: Welch t {fixed}"
            );
            worst_pooled = worst_pooled.max(pooled);
        }
    }
    // The case is real: a pooled spread claims far more often than alpha somewhere here.
    assert!(worst_pooled > 2.0 * ALPHA, "{worst_pooled}");
}

#[test]
fn welch_form_equals_the_pooled_one_for_equal_spreads_and_counts() {
    let b = MixtureBoundary::tuned(0.05, 10.0).unwrap();
    let (sd, m) = (0.03, 10);
    let welch = b.welch_half_width(sd, sd, m, m).unwrap();
    assert!((welch - b.two_sample_half_width(sd, m, m)).abs() < 1e-12);
    // A head three times noisier widens it; one run on a side has no Welch form.
    assert!(b.welch_half_width(sd, 3.0 * sd, m, 4).unwrap() > b.two_sample_half_width(sd, m, 4));
    assert_eq!(b.welch_half_width(sd, sd, 1, 5), None);
}

/// One run on a side: its spread is unknown. Borrowing the other side's (the pooled form, what
/// `analyze` did silently before) claims far above alpha when the single run's side is noisier,
/// so by default the row has no interval at all; `assume_equal_spread` asks for the pooled form.
/// The rates are docs/statistics.md §1b's (`-- --nocapture` prints them).
#[test]
fn one_run_on_a_side_gets_no_interval_since_pooling_would_claim_above_alpha() {
    let mut worst: f64 = 0.0;
    for (m, ratio) in [(20, 2.0), (20, 4.0), (10, 3.0)] {
        let mut rng = Normal(m as u64 * 100 + ratio as u64);
        // As `analyze` tunes by default: to the recorded runs, mn/(m+n), at least 1.
        let opts = AnalysisOptions {
            n_star: ((m as f64) / (m as f64 + 1.0)).max(1.0),
            ..AnalysisOptions::default()
        };
        let assumed = AnalysisOptions {
            assume_equal_spread: true,
            ..opts.clone()
        };
        let mut claims = 0;
        for _ in 0..TRIALS {
            let base: Vec<f64> = (0..m)
                .map(|_| 100.0 * (BASE_SPREAD * rng.draw()).exp())
                .collect();
            let head = [100.0 * (ratio * BASE_SPREAD * rng.draw()).exp()];
            let refused = analyze_runs(&base, &head, &opts, None).unwrap_err();
            assert!(
                refused.to_string().starts_with("one run on the head"),
                "{refused}"
            );
            let a = analyze_runs(&base, &head, &assumed, None).unwrap();
            claims += usize::from(!a.interval.contains(0.0));
        }
        let rate = claims as f64 / TRIALS as f64;
        eprintln!(
            "base {m} runs + 1 head run {ratio}x noisier: pooled anytime interval claims {:.1}%",
            100.0 * rate
        );
        worst = worst.max(rate);
    }
    assert!(worst > 2.0 * ALPHA, "pooling one noisy run claims: {worst}");
}
