//! Hodges–Lehmann estimate with the Wilcoxon signed-rank confidence interval (Hodges & Lehmann
//! 1963): a median-type diagnostic that a few wild pairs cannot drag. Fixed-n, not safe to peek.
//!
//! The interval is `[W_(k), W_(M+1−k)]` over the sorted Walsh averages `(d_i + d_j)/2, i ≤ j`
//! (`M = n(n+1)/2` of them), with `k` the largest index whose signed-rank tail
//! `2·P(T⁺ ≤ k − 1)` stays at or under alpha. Exact distribution up to 50 pairs, normal above.

use crate::error::{StatsError, check_alpha};
use crate::fixed_interval::{normal_cdf, z_quantile};
use crate::interval::Interval;
use crate::walsh::walsh_order_statistic;

/// Up to this many pairs the exact signed-rank distribution is used.
pub const EXACT_LIMIT: usize = 50;

/// Above this many pairs the n(n+1)/2 Walsh averages would take too much memory.
pub const WALSH_LIMIT: usize = 4000;

/// The Hodges–Lehmann estimate and its signed-rank interval (log scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HodgesLehmann {
    /// Median of the Walsh averages.
    pub estimate: f64,
    /// The whole line when n is too small to reach the requested confidence at all.
    pub interval: Interval,
    /// The confidence the discrete signed-rank distribution actually gives (≥ 1 − alpha).
    pub achieved_confidence: f64,
    /// True when the exact distribution was used, false for the normal approximation.
    pub exact: bool,
}

/// `P(T⁺ ≤ t)` for `t = 0..=n(n+1)/2` under the null, from the exact subset-sum counts.
pub fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    // counts[t] = number of subsets of {1..n} with sum t; exact in f64 while 2^n < 2^53.
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for rank in 1..=n {
        let top = rank * (rank + 1) / 2;
        for t in (rank..=top).rev() {
            counts[t] += counts[t - rank];
        }
    }
    let total = 2f64.powi(n as i32);
    let mut acc = 0.0;
    counts
        .iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

/// Largest `k` with `2·P(T⁺ ≤ k−1) ≤ alpha` and the confidence it achieves; `k = 0` means no
/// finite interval reaches `1 − alpha`. Remembered per (n, alpha): the exact distribution costs
/// O(n³), and a suite asks for the same n once per series on every upload.
fn critical_rank(n: usize, alpha: f64) -> Result<(usize, f64, bool), StatsError> {
    type Known = std::collections::HashMap<(usize, u64), (usize, f64, bool)>;
    static KNOWN: std::sync::OnceLock<std::sync::Mutex<Known>> = std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    let key = (n, alpha.to_bits());
    if let Some(found) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(*found);
    }
    let found = critical_rank_uncached(n, alpha)?;
    known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, found);
    Ok(found)
}

fn critical_rank_uncached(n: usize, alpha: f64) -> Result<(usize, f64, bool), StatsError> {
    let m = n * (n + 1) / 2;
    if n <= EXACT_LIMIT {
        let cdf = signed_rank_cdf(n);
        let k = cdf.iter().take_while(|&&p| 2.0 * p <= alpha).count();
        let achieved = if k == 0 { 1.0 } else { 1.0 - 2.0 * cdf[k - 1] };
        return Ok((k.min(m / 2), achieved, true));
    }
    let nf = n as f64;
    let mu = nf * (nf + 1.0) / 4.0;
    let sigma = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    // Largest c with Φ((c + ½ − μ)/σ) ≤ alpha/2 (continuity-corrected), then k = c + 1.
    let c = (mu - z_quantile(alpha)? * sigma - 0.5).floor();
    if c < 0.0 {
        return Ok((0, 1.0, false));
    }
    let k = (c as usize + 1).min(m / 2);
    let achieved = 1.0 - 2.0 * normal_cdf(((k - 1) as f64 + 0.5 - mu) / sigma);
    Ok((k, achieved, false))
}

/// Hodges–Lehmann estimate and Wilcoxon signed-rank interval of the log-ratios `d`.
pub fn hodges_lehmann(d: &[f64], alpha: f64) -> Result<HodgesLehmann, StatsError> {
    check_alpha(alpha)?;
    let n = d.len();
    if n < 2 {
        return Err(StatsError::TooFewPairs {
            found: n,
            needed: 2,
        });
    }
    if n > WALSH_LIMIT {
        return Err(StatsError::TooManyPairs {
            n,
            limit: WALSH_LIMIT,
        });
    }
    crate::paired::validate_log_ratios(d)?;
    let m = n * (n + 1) / 2;
    let (k, achieved_confidence, exact) = critical_rank(n, alpha)?;
    // Only three or four order statistics of the m Walsh averages are needed: selected from
    // the sorted pairs in O(n log n) instead of forming all m, which made each analysis of a
    // large suite grow with the square of its rounds.
    let mut sorted = d.to_vec();
    sorted.sort_by(f64::total_cmp);
    let order_stat = |i: usize| walsh_order_statistic(&sorted, i);
    let estimate = if m % 2 == 1 {
        order_stat(m / 2)
    } else {
        0.5 * (order_stat(m / 2 - 1) + order_stat(m / 2))
    };
    let interval = if k == 0 {
        Interval::WHOLE_LINE
    } else {
        Interval {
            lower: order_stat(k - 1),
            upper: order_stat(m - k),
        }
    };
    Ok(HodgesLehmann {
        estimate,
        interval,
        achieved_confidence,
        exact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_distribution_of_small_n() {
        // n = 3: sums 0..6 with counts 1,1,1,2,1,1,1 over 8 subsets.
        let cdf = signed_rank_cdf(3);
        let expected = [1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0].map(|c| c / 8.0);
        for (a, b) in cdf.iter().zip(expected) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    #[test]
    fn critical_values_match_tables() {
        // Classical two-sided 5% critical values of T⁺ (reject when T⁺ ≤ c): n=10 → 8, n=20 → 52.
        assert_eq!(critical_rank(10, 0.05).unwrap().0, 9);
        assert_eq!(critical_rank(20, 0.05).unwrap().0, 53);
        // n = 5 cannot reach 95%: 2/32 > 0.05.
        assert_eq!(critical_rank(5, 0.05).unwrap().0, 0);
        assert_eq!(critical_rank(6, 0.05).unwrap().0, 1);
    }

    #[test]
    fn normal_approximation_is_close_to_exact_at_the_switch() {
        let exact = critical_rank(50, 0.05).unwrap();
        let nf = 50.0f64;
        let mu = nf * (nf + 1.0) / 4.0;
        let sigma = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        let approx = (mu - z_quantile(0.05).unwrap() * sigma - 0.5).floor() as usize + 1;
        assert!(exact.0.abs_diff(approx) <= 1, "{} vs {approx}", exact.0);
        assert!(!critical_rank(51, 0.05).unwrap().2);
    }

    #[test]
    fn symmetric_data_centres_on_zero() {
        let d = [-0.02, -0.01, 0.0, 0.01, 0.02, -0.015, 0.015];
        let hl = hodges_lehmann(&d, 0.05).unwrap();
        assert!(hl.estimate.abs() < 1e-12);
        assert!(hl.interval.contains(0.0));
        assert!(hl.achieved_confidence >= 0.95);
    }
}
