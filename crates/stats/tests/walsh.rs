//! The Walsh-average selection equals sorting every average: at any rank, on data with ties,
//! zeros and negative values, and inside the Hodges–Lehmann estimate and interval.

use benchgate_stats::{hodges_lehmann, walsh_order_statistic};
use proptest::prelude::*;

/// Every average `(x_i + x_j)/2, i ≤ j`, sorted: what the estimator computed before selection.
fn every_average_sorted(x: &[f64]) -> Vec<f64> {
    let mut all: Vec<f64> = (0..x.len())
        .flat_map(|i| (i..x.len()).map(move |j| (i, j)))
        .map(|(i, j)| 0.5 * (x[i] + x[j]))
        .collect();
    all.sort_by(f64::total_cmp);
    all
}

/// Log-ratios as uploads give them: mostly continuous, sometimes on a coarse grid (timer
/// resolution), so ties and exact zeros are common.
fn log_ratios() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec(-0.3f64..0.3, 1..150),
        prop::collection::vec((-20i32..20).prop_map(|k| f64::from(k) * 0.005), 1..150),
        prop::collection::vec(prop_oneof![Just(0.0), Just(-0.0), Just(0.01)], 1..40),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn selection_equals_sorting_every_average(
        mut x in log_ratios(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 16),
    ) {
        x.sort_by(f64::total_cmp);
        let all = every_average_sorted(&x);
        let m = all.len();
        let ranks = [0, m - 1, m / 2, m.saturating_sub(1) / 2]
            .into_iter()
            .chain(picks.iter().map(|p| p.index(m)));
        for k in ranks {
            let got = walsh_order_statistic(&x, k);
            prop_assert_eq!(got.to_bits(), all[k].to_bits(), "rank {} of {}: {} vs {}", k, m, got, all[k]);
        }
    }

    #[test]
    fn hodges_lehmann_is_the_median_and_symmetric_ranks_of_every_average(
        d in log_ratios().prop_filter("two pairs at least", |d| d.len() >= 2),
    ) {
        let hl = hodges_lehmann(&d, 0.05).unwrap();
        let all = every_average_sorted(&d);
        let m = all.len();
        let median = if m % 2 == 1 { all[m / 2] } else { 0.5 * (all[m / 2 - 1] + all[m / 2]) };
        prop_assert_eq!(hl.estimate.to_bits(), median.to_bits());
        if hl.interval.lower.is_finite() {
            let symmetric = (1..=m / 2).any(|k| {
                all[k - 1].to_bits() == hl.interval.lower.to_bits()
                    && all[m - k].to_bits() == hl.interval.upper.to_bits()
            });
            prop_assert!(symmetric, "{:?} is not [W_(k), W_(M+1-k)]", hl.interval);
        }
    }
}
