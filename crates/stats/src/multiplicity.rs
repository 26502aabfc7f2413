//! Many benchmarks in one PR: corrections so the chance of any (or the share of) false results
//! stays controlled, and the geomean row over the benchmarks both sides share.
//!
//! The gate uses e-BH on the Bayes factors (Wang & Ramdas 2022), which controls the false
//! discovery rate under any dependence between benchmarks. Intervals shown for the flagged
//! benchmarks use the e-BY level `alpha·R/m` (Xu, Wang & Ramdas 2024) so that their
//! false-coverage rate stays at alpha. Bonferroni, Holm and BH on p-values are offered for
//! comparison and for users who ask for them.

use benchgate_api::BenchmarkResult;

use crate::TIME_METRICS;
use crate::error::{StatsError, check_alpha};

fn check_p_values(p: &[f64]) -> Result<(), StatsError> {
    for &x in p {
        if !(0.0..=1.0).contains(&x) {
            return Err(StatsError::InvalidParameter {
                name: "p-value",
                value: x,
                expected: "0 <= p <= 1",
            });
        }
    }
    Ok(())
}

/// Indices of `values` in ascending order (NaN-free input assumed by the callers' checks).
fn ascending_order(values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    order
}

/// Bonferroni: reject where `p ≤ alpha/m`; controls the family-wise error rate.
pub fn bonferroni(p: &[f64], alpha: f64) -> Result<Vec<bool>, StatsError> {
    check_alpha(alpha)?;
    check_p_values(p)?;
    let m = p.len() as f64;
    Ok(p.iter().map(|&x| x <= alpha / m).collect())
}

/// Holm's step-down: uniformly more powerful than Bonferroni, same family-wise guarantee.
pub fn holm(p: &[f64], alpha: f64) -> Result<Vec<bool>, StatsError> {
    check_alpha(alpha)?;
    check_p_values(p)?;
    let m = p.len();
    let mut reject = vec![false; m];
    for (rank, &i) in ascending_order(p).iter().enumerate() {
        if p[i] > alpha / (m - rank) as f64 {
            break;
        }
        reject[i] = true;
    }
    Ok(reject)
}

/// Benjamini–Hochberg step-up: false discovery rate ≤ alpha under independence (or PRDS).
pub fn benjamini_hochberg(p: &[f64], alpha: f64) -> Result<Vec<bool>, StatsError> {
    check_alpha(alpha)?;
    check_p_values(p)?;
    let m = p.len();
    let order = ascending_order(p);
    let k = (1..=m)
        .rev()
        .find(|&k| p[order[k - 1]] <= alpha * k as f64 / m as f64)
        .unwrap_or(0);
    let mut reject = vec![false; m];
    for &i in &order[..k] {
        reject[i] = true;
    }
    Ok(reject)
}

/// e-BH: reject the k largest e-values for the largest k with `e_(k) ≥ m/(alpha·k)`; FDR ≤ alpha
/// under arbitrary dependence (Wang & Ramdas 2022).
pub fn e_benjamini_hochberg(e: &[f64], alpha: f64) -> Result<Vec<bool>, StatsError> {
    check_alpha(alpha)?;
    if let Some(&bad) = e.iter().find(|x| x.is_nan() || **x < 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "e-value",
            value: bad,
            expected: "e >= 0",
        });
    }
    let m = e.len();
    let mut order = ascending_order(e);
    order.reverse();
    let k = (1..=m)
        .rev()
        .find(|&k| e[order[k - 1]] * alpha * k as f64 >= m as f64)
        .unwrap_or(0);
    let mut reject = vec![false; m];
    for &i in &order[..k] {
        reject[i] = true;
    }
    Ok(reject)
}

/// The e-BY level for intervals shown beside `selected` flagged benchmarks out of `total`:
/// `alpha·max(selected, 1)/total`, which keeps the false-coverage rate at alpha.
pub fn e_by_level(alpha: f64, selected: usize, total: usize) -> Result<f64, StatsError> {
    check_alpha(alpha)?;
    if total == 0 {
        return Err(StatsError::Empty);
    }
    Ok(alpha * selected.clamp(1, total) as f64 / total as f64)
}

/// The geometric mean of head/base ratios over the benchmarks both sides share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeomeanRow {
    /// How many benchmarks both sides have.
    pub shared: usize,
    /// `exp(mean ln(head/base))` over those benchmarks.
    pub ratio: f64,
    /// `100(ratio − 1)`.
    pub change_pct: f64,
}

/// Geomean of `head/base` over names present on both sides (each name's centre, positive).
pub fn geomean_of_shared(
    base: &[(&str, f64)],
    head: &[(&str, f64)],
) -> Result<GeomeanRow, StatsError> {
    let mut sum = 0.0;
    let mut shared = 0usize;
    for &(name, b) in base {
        if let Some(&(_, h)) = head.iter().find(|(n, _)| *n == name) {
            crate::paired::validate_samples(&[b], crate::error::SampleSide::Base)?;
            crate::paired::validate_samples(&[h], crate::error::SampleSide::Head)?;
            sum += h.ln() - b.ln();
            shared += 1;
        }
    }
    if shared == 0 {
        return Err(StatsError::Empty);
    }
    let mean_log = sum / shared as f64;
    Ok(GeomeanRow {
        shared,
        ratio: mean_log.exp(),
        change_pct: crate::paired::percent_from_log(mean_log),
    })
}

/// The geomean row of one comparison: a summary of the time change across benchmarks, not a
/// verdict, and never part of the gate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeomeanSummary {
    /// Gated time rows summarised.
    pub benchmarks: usize,
    /// `100(exp(mean d̄) − 1)`: the geometric mean of the head/base ratios.
    pub change_pct: f64,
}

/// Geomean of head/base over the gated time rows (`time` or `wall_time`) of one comparison;
/// `None` with fewer than two. A result exists only for a benchmark both sides ran, so one
/// added or removed in the PR is left out. No interval: the rows share rounds and machine, and
/// their per-benchmark intervals say nothing about the joint spread.
pub fn geomean_row(results: &[BenchmarkResult]) -> Option<GeomeanSummary> {
    // ln(head/base) of the centres is each row's d̄ exactly (the centres are geometric means).
    let logs: Vec<f64> = results
        .iter()
        .filter(|r| r.gated && r.verdict.is_analysed() && TIME_METRICS.contains(&r.metric.as_str()))
        .filter_map(|r| Some(r.head_center?.ln() - r.base_center?.ln()))
        .collect();
    if logs.len() < 2 || logs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mean_log = logs.iter().sum::<f64>() / logs.len() as f64;
    Some(GeomeanSummary {
        benchmarks: logs.len(),
        change_pct: crate::paired::percent_from_log(mean_log),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_value_corrections_table() {
        let p = [0.01, 0.04, 0.03, 0.005];
        assert_eq!(bonferroni(&p, 0.05).unwrap(), [true, false, false, true]);
        // Holm: 0.005 ≤ .0125, 0.01 ≤ .0167, 0.03 > .025 → stop.
        assert_eq!(holm(&p, 0.05).unwrap(), [true, false, false, true]);
        // BH: 0.04 ≤ 0.05·4/4 → all four.
        assert_eq!(
            benjamini_hochberg(&p, 0.05).unwrap(),
            [true, true, true, true]
        );
        assert!(bonferroni(&[1.5], 0.05).is_err());
    }

    #[test]
    fn e_bh_table() {
        // m = 4, alpha = 0.05: k needs e_(k) ≥ 80/k: 80, 40, 26.7, 20.
        let e = [100.0, 45.0, 20.0, 1.0];
        assert_eq!(
            e_benjamini_hochberg(&e, 0.05).unwrap(),
            [true, true, false, false]
        );
        let e = [70.0, 45.0, 20.0, 1.0];
        assert_eq!(
            e_benjamini_hochberg(&e, 0.05).unwrap(),
            [true, true, false, false]
        );
        let e = [70.0, 35.0, 20.0, 1.0];
        assert_eq!(e_benjamini_hochberg(&e, 0.05).unwrap(), [false; 4]);
    }

    #[test]
    fn e_by_and_geomean() {
        assert!((e_by_level(0.05, 2, 10).unwrap() - 0.01).abs() < 1e-15);
        assert!((e_by_level(0.05, 0, 10).unwrap() - 0.005).abs() < 1e-15);
        let g = geomean_of_shared(
            &[("a", 100.0), ("b", 10.0), ("only-base", 1.0)],
            &[("b", 40.0), ("a", 100.0), ("only-head", 1.0)],
        )
        .unwrap();
        assert_eq!(g.shared, 2);
        assert!((g.ratio - 2.0).abs() < 1e-12);
        assert!((g.change_pct - 100.0).abs() < 1e-9);
    }

    fn row(name: &str, metric: &str, base: f64, head: f64, gated: bool) -> BenchmarkResult {
        BenchmarkResult {
            rule: None,
            name: name.into(),
            metric: metric.into(),
            unit: "ns".into(),
            n: 10,
            base_center: Some(base),
            head_center: Some(head),
            change_pct: Some(100.0 * (head / base - 1.0)),
            interval_pct: [None, None],
            fixed_interval_pct: [None, None],
            verdict: benchgate_api::VerdictKind::NoResultYet,
            practical: false,
            rounds_needed: Some(5),
            e_value: 1.0,
            gated,
            selected: gated,
            hodges_lehmann: None,
            warnings: Vec::new(),
            direction: Default::default(),
            margin_pct: 1.0,
            layout_pct: None,
            tolerance_pct: None,
            reason: None,
            runners: Vec::new(),
            runs: None,
            modes: None,
            guard_runs: None,
        }
    }

    #[test]
    fn geomean_row_summarises_gated_time_rows_only() {
        let results = [
            row("a", "time", 100.0, 400.0, true),
            row("b", "time", 100.0, 100.0, true),
            // Memory and a benchmark without a time metric are not in the time summary.
            row("a", "peak_rss", 100.0, 1000.0, false),
            row("sizes", "bytes", 100.0, 1000.0, true),
            row("cmd", "wall_time", 100.0, 25.0, true),
        ];
        let g = geomean_row(&results).unwrap();
        assert_eq!(g.benchmarks, 3);
        // (4 · 1 · 1/4)^(1/3) = 1: no change overall.
        assert!(g.change_pct.abs() < 1e-9, "{}", g.change_pct);
        assert_eq!(geomean_row(&results[..1]), None, "one row is not a summary");
    }
}
