//! Which rows of a comparison decide the gate, and which of those many-benchmark testing
//! selects. Shared by `benchgate compare`/`analyze` and the server's check run.

use benchgate_api::BenchmarkResult;

use crate::multiplicity::e_benjamini_hochberg;

/// Metrics that measure a benchmark's time: `time` (per iteration, from a harness) and
/// `wall_time` (a whole process, the `command` format).
pub const TIME_METRICS: [&str; 2] = ["time", "wall_time"];

/// Metrics that never gate: they describe how the benchmark was prepared, not what it measures.
pub const NEVER_GATED: [&str; 1] = ["build_time"];

/// Per `(benchmark, metric)`: whether it gates — the benchmark's time metric when it reports
/// one, otherwise every metric it reports (except [`NEVER_GATED`]).
pub fn gated_mask(keys: &[(&str, &str)]) -> Vec<bool> {
    let is_time = |m: &str| TIME_METRICS.contains(&m);
    keys.iter()
        .map(|&(benchmark, metric)| {
            if NEVER_GATED.contains(&metric) {
                return false;
            }
            let has_time = keys.iter().any(|&(b, m)| b == benchmark && is_time(m));
            !has_time || is_time(metric)
        })
        .collect()
}

/// e-BH selection at `alpha` over the gated rows' e-values; a single gated row is decided by
/// its own interval alone. Invalid e-values select nothing.
pub fn gate_selection(e_values: &[f64], alpha: f64) -> Vec<bool> {
    if e_values.len() <= 1 {
        return vec![true; e_values.len()];
    }
    e_benjamini_hochberg(e_values, alpha).unwrap_or_else(|_| vec![false; e_values.len()])
}

/// Sets `gated` and `selected` on every row of one comparison (one runner's rows).
pub fn mark_gate(results: &mut [BenchmarkResult], alpha: f64) {
    let keys: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r.name.as_str(), r.metric.as_str()))
        .collect();
    let mask = gated_mask(&keys);
    let gated: Vec<usize> = (0..results.len()).filter(|&i| mask[i]).collect();
    let e: Vec<f64> = gated.iter().map(|&i| results[i].e_value).collect();
    let selected = gate_selection(&e, alpha);
    for (i, r) in results.iter_mut().enumerate() {
        r.gated = mask[i];
        r.selected = false;
    }
    for (&i, s) in gated.iter().zip(selected) {
        results[i].selected = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_metric_gates_and_its_companions_do_not() {
        let keys = [
            ("command", "wall_time"),
            ("command", "cpu_time"),
            ("command", "peak_rss"),
            ("parse", "time"),
            ("parse", "allocs_per_op"),
            ("sizes", "bytes"),
            ("build", "build_time"),
        ];
        assert_eq!(
            gated_mask(&keys),
            [true, false, false, true, false, true, false]
        );
    }

    #[test]
    fn one_gated_row_decides_alone_and_many_go_through_e_bh() {
        assert_eq!(gate_selection(&[1.5], 0.05), [true]);
        // 200 is past 1/alpha·m/k for both; 1.0 is evidence of nothing.
        assert_eq!(
            gate_selection(&[200.0, 1.0, 300.0], 0.05),
            [true, false, true]
        );
    }
}
