//! A PR of 200 benchmarks × 100 rounds analysed end to end: log-ratios, the confidence sequence
//! at every n, the t and Wilcoxon diagnostics, verdicts, outliers, drift, then e-BH over all 200.

use benchgate_stats::{
    AnalysisOptions, Stratum, analyze_pairs, analyze_strata, e_benjamini_hochberg, hodges_lehmann,
};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const BENCHMARKS: usize = 200;
const ROUNDS: usize = 100;

/// SplitMix64: a tiny deterministic generator so the input is the same on every run.
fn splitmix(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

fn make_pr() -> Vec<(Vec<f64>, Vec<f64>)> {
    let mut state = 42;
    (0..BENCHMARKS)
        .map(|b| {
            // A fifth of the benchmarks change by a few percent; the rest do not.
            let effect = if b % 5 == 0 { 1.03 } else { 1.0 };
            let base: Vec<f64> = (0..ROUNDS)
                .map(|_| 1000.0 * (1.0 + 0.05 * (splitmix(&mut state) - 0.5)))
                .collect();
            let head: Vec<f64> = (0..ROUNDS)
                .map(|_| effect * 1000.0 * (1.0 + 0.05 * (splitmix(&mut state) - 0.5)))
                .collect();
            (base, head)
        })
        .collect()
}

fn analyze_pr(c: &mut Criterion) {
    let pr = make_pr();
    let opts = AnalysisOptions::default();
    c.bench_function("analyze 200 benchmarks x 100 rounds", |b| {
        b.iter(|| {
            let analyses: Vec<_> = pr
                .iter()
                .map(|(base, head)| analyze_pairs(base, head, &opts, None).unwrap())
                .collect();
            let e: Vec<f64> = analyses.iter().map(|a| a.e_value).collect();
            black_box(e_benjamini_hochberg(&e, opts.alpha).unwrap())
        })
    });
}

/// The same PR measured by two runners of one hardware class (50 rounds each), combined
/// stratified by runner.
fn analyze_pr_two_runners(c: &mut Criterion) {
    let pr = make_pr();
    let opts = AnalysisOptions::default();
    let order: Vec<bool> = (0..ROUNDS / 2).map(|i| i % 2 == 0).collect();
    c.bench_function("analyze 200 benchmarks x 2 runners x 50 rounds", |b| {
        b.iter(|| {
            let analyses: Vec<_> = pr
                .iter()
                .map(|(base, head)| {
                    let half = ROUNDS / 2;
                    let strata = [
                        Stratum {
                            base: &base[..half],
                            head: &head[..half],
                            base_first: &order,
                            floor: None,
                        },
                        Stratum {
                            base: &base[half..],
                            head: &head[half..],
                            base_first: &order,
                            floor: None,
                        },
                    ];
                    analyze_strata(&strata, &opts).unwrap()
                })
                .collect();
            let e: Vec<f64> = analyses.iter().map(|a| a.e_value).collect();
            black_box(e_benjamini_hochberg(&e, opts.alpha).unwrap())
        })
    });
}

/// One series analysed at growing numbers of rounds: the server analyses every series of a
/// comparison after each upload, so a term in n² here is n³ over a comparison's life.
fn analyze_one_series_by_rounds(c: &mut Criterion) {
    let opts = AnalysisOptions::default();
    let mut group = c.benchmark_group("one series by rounds");
    for rounds in [5, 10, 20, 40, 80, 160, 320, 640] {
        let mut state = 7;
        let base: Vec<f64> = (0..rounds)
            .map(|_| 1000.0 * (1.0 + 0.05 * (splitmix(&mut state) - 0.5)))
            .collect();
        let head: Vec<f64> = (0..rounds)
            .map(|_| 1010.0 * (1.0 + 0.05 * (splitmix(&mut state) - 0.5)))
            .collect();
        let d: Vec<f64> = base.iter().zip(&head).map(|(b, h)| (h / b).ln()).collect();
        group.bench_function(format!("analyze_pairs n={rounds}"), |b| {
            b.iter(|| black_box(analyze_pairs(&base, &head, &opts, None).unwrap()))
        });
        group.bench_function(format!("hodges_lehmann n={rounds}"), |b| {
            b.iter(|| black_box(hodges_lehmann(&d, opts.alpha).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    analyze_pr,
    analyze_pr_two_runners,
    analyze_one_series_by_rounds
);
criterion_main!(benches);
