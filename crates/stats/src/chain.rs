//! Main's history as a chain of paired comparisons: commit k against commit k−1, each one
//! interleaved on one runner, so machine drift between steps cancels. The relative performance
//! of commit k against the anchor (commit 0) is the product of the step ratios, `Σ d̄_j` on the
//! log scale. Its interval is the sum of the steps' confidence-sequence intervals, each step
//! at level `α_j = α·6/(π²·j²)` for the j-th step from the anchor: the `α_j` sum to α, so by
//! the union bound every point of the chain (the whole plotted band) holds at once with
//! probability ≥ 1 − α, however each step's rounds were stopped. The width grows with every
//! step, as it must: summing k noisy steps is k times the uncertainty, which is why creep is
//! judged by one anchor comparison instead (docs/statistics.md, "Main's history").

use crate::confidence_sequence::{ConfidenceSequence, MixtureBoundary};
use crate::error::StatsError;
use crate::interval::Interval;

/// One step of the chain: the paired log-ratios `ln(head/base)` of one comparison, in round
/// order, and the `n*` its boundary was tuned for.
#[derive(Debug, Clone, Copy)]
pub struct ChainStep<'a> {
    pub log_ratios: &'a [f64],
    pub n_star: f64,
}

/// The chain after some steps: the anchor's commit compared with this one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainPoint {
    /// Steps from the anchor.
    pub steps: usize,
    /// This step's own mean log-ratio and interval, at its share of alpha.
    pub step_estimate: f64,
    pub step_interval: Interval,
    /// `Σ d̄_j`: this commit against the anchor, log scale.
    pub estimate: f64,
    /// Simultaneous over the whole chain at level alpha.
    pub interval: Interval,
}

/// The share of alpha of the `j`-th step from the anchor (1-based): `α·6/(π²·j²)`.
pub fn step_alpha(alpha: f64, j: usize) -> f64 {
    alpha * 6.0 / (std::f64::consts::PI.powi(2) * (j as f64).powi(2))
}

/// Every point of the chain from the anchor, step by step. A step with fewer than two pairs
/// has no bound, and every point from it on is unbounded on both sides.
pub fn chain(steps: &[ChainStep<'_>], alpha: f64) -> Result<Vec<ChainPoint>, StatsError> {
    let mut points = Vec::with_capacity(steps.len());
    let (mut estimate, mut lower, mut upper) = (0.0, 0.0, 0.0);
    for (i, step) in steps.iter().enumerate() {
        let boundary = MixtureBoundary::tuned(step_alpha(alpha, i + 1), step.n_star.max(1.0))?;
        let cs = ConfidenceSequence::from_log_ratios(boundary, 0.0, step.log_ratios)?;
        let step_interval = if cs.n() < 2 {
            Interval::WHOLE_LINE
        } else if cs.crossed() {
            // The step's sequence contradicted itself: only its current interval is valid.
            cs.current_interval()
        } else {
            cs.running_interval()
        };
        estimate += cs.mean();
        lower += step_interval.lower;
        upper += step_interval.upper;
        points.push(ChainPoint {
            steps: i + 1,
            step_estimate: cs.mean(),
            step_interval,
            estimate,
            interval: Interval { lower, upper },
        });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64, center: f64, spread: f64) -> Vec<f64> {
        let mut x = seed.max(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                center + spread * ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
            })
            .collect()
    }

    #[test]
    fn the_shares_of_alpha_sum_to_alpha() {
        let total: f64 = (1..200_000).map(|j| step_alpha(0.05, j)).sum();
        assert!(total < 0.05 && total > 0.04999, "{total}");
    }

    #[test]
    fn the_chain_adds_the_steps_and_its_interval_only_grows() {
        let steps: Vec<Vec<f64>> = (0..6)
            .map(|k| noise(30, k + 1, if k == 2 { 0.10 } else { 0.0 }, 0.02))
            .collect();
        let chain_steps: Vec<ChainStep> = steps
            .iter()
            .map(|d| ChainStep {
                log_ratios: d,
                n_star: 20.0,
            })
            .collect();
        let points = chain(&chain_steps, 0.05).unwrap();
        assert_eq!(points.len(), 6);
        let total: f64 = steps.iter().map(|d| d.iter().sum::<f64>() / 30.0).sum();
        assert!((points[5].estimate - total).abs() < 1e-12);
        for w in points.windows(2) {
            let width = |p: &ChainPoint| p.interval.upper - p.interval.lower;
            assert!(width(&w[1]) > width(&w[0]), "{w:?}");
        }
        // The slow step is found where it is, and the chain holds it from there on.
        assert!(points[2].step_interval.lower > 0.0, "{:?}", points[2]);
        assert!(points[1].step_interval.contains(0.0));
        assert!(points[5].interval.contains(0.10), "{:?}", points[5]);
    }

    #[test]
    fn a_step_without_pairs_leaves_the_rest_of_the_chain_unbounded() {
        let good = noise(20, 3, 0.0, 0.02);
        let empty: Vec<f64> = vec![0.01];
        let points = chain(
            &[
                ChainStep {
                    log_ratios: &good,
                    n_star: 20.0,
                },
                ChainStep {
                    log_ratios: &empty,
                    n_star: 20.0,
                },
                ChainStep {
                    log_ratios: &good,
                    n_star: 20.0,
                },
            ],
            0.05,
        )
        .unwrap();
        assert!(points[0].interval.lower.is_finite());
        assert!(points[1].interval.lower.is_infinite() && points[2].interval.upper.is_infinite());
    }
}
