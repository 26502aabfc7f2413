//! benchgate-stats: numbers in, verdicts out. Paired log-ratios, the anytime-valid
//! Gaussian-mixture confidence sequence, A/A noise floors and verdicts. No I/O, no async.
//!
//! Start at [`analyze_pairs`]: it takes the base and head samples of one benchmark and metric
//! and returns a [`BenchmarkAnalysis`] with every number the report shows;
//! [`BenchmarkAnalysis::to_result`] gives the stable JSON form. docs/statistics.md explains the
//! method to users.

pub mod analysis;
pub mod audit;
pub mod bisect;
pub mod chain;
pub mod confidence_sequence;
pub mod counts;
pub mod drift;
pub mod error;
pub mod fixed_interval;
pub mod flag;
pub mod floor;
pub mod floor_sequence;
pub mod gate;
pub mod interval;
pub mod mode_gate;
pub mod mode_words;
pub mod modes;
pub mod multiplicity;
pub mod order;
pub mod outliers;
pub mod paired;
pub mod run_length;
pub mod stratified;
pub mod unpaired;
pub mod verdict;
pub mod walsh;
pub mod wilcoxon;
pub mod words;

/// Metrics that measure a benchmark's time: `time` (per iteration, from a harness) and
/// `wall_time` (a whole process, the `command` format). Shared by the gate and the geomean row.
pub const TIME_METRICS: [&str; 2] = ["time", "wall_time"];

/// Where a result's e-value (and a margin too absurd to print) saturates. Far past any threshold
/// the gate uses; `f64::MAX` served the arithmetic, but Postgres returns it from `jsonb` as 309
/// digits that serde_json refuses, which made every such stored result unreadable.
pub const SATURATED: f64 = 1e300;

/// Whether `x` may be served and stored as a result's number: finite and within ±[`SATURATED`]
/// (a percentage past it is served as `null`, as one that overflows is).
pub fn storable(x: f64) -> bool {
    x.is_finite() && x.abs() <= SATURATED
}

pub use analysis::{AnalysisOptions, Basis, BenchmarkAnalysis, RoundOrder, analyze_pairs};
pub use benchgate_api::{
    AnalysisReport, BenchmarkResult, HodgesLehmannResult, ModeShift, ModeSummary, VerdictKind,
};
pub use chain::{ChainPoint, ChainStep, chain, step_alpha};
pub use confidence_sequence::{ConfidenceSequence, MixtureBoundary, mixture_u, plan_n_star};
pub use drift::{Coefficient, DriftReport, abba_base_first, drift_regression};
pub use error::{SampleSide, StatsError};
pub use fixed_interval::t_interval;
pub use floor::{NoiseFloor, layout_band, plan_per_benchmark, practical_margin};
pub use gate::{
    GateOutcome, gate_selection, gated_mask, is_regression, mark_gate, outcome,
    undecided_benchmarks, waits_for_rounds, within_tolerance,
};
pub use interval::Interval;
pub use multiplicity::{
    GeomeanRow, GeomeanSummary, benjamini_hochberg, bonferroni, e_benjamini_hochberg, e_by_level,
    geomean_of_shared, geomean_row, holm,
};
pub use order::{Standing, report_order, standing};
pub use outliers::{MODIFIED_Z_THRESHOLD, Outlier, modified_z_outliers};
pub use paired::{log_from_percent, paired_log_ratios, percent_from_log};
pub use stratified::{StrataMemo, Stratum, analyze_strata, analyze_strata_with};
pub use unpaired::{analyze_exact_counts, analyze_runs};
pub use verdict::{DecisionRule, Progress, Verdict, decide, decide_beyond, total_rounds_needed};
pub use walsh::walsh_order_statistic;
pub use wilcoxon::{HodgesLehmann, hodges_lehmann};
