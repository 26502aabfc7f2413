//! The order a report reads in: what a maintainer must see first. Regressions (largest first),
//! then improvements, then benchmarks added or removed, then the undecided and the unchanged
//! rows, which reports fold away. The PR comment, `compare`/`analyze` and the comparison page
//! all use it.

use benchgate_api::{BenchmarkResult, VerdictKind};

use crate::gate::{exact_changed, is_regression_ignoring_gate};
use crate::words;

/// Where a row stands, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Standing {
    /// Decided worse: slower beyond zero, or an exact count that got worse.
    Regression,
    /// Decided better.
    Improvement,
    /// Only one side ran it.
    OneSided,
    /// No verdict yet (or below the runner's resolution, or not analysable).
    Undecided,
    /// Decided unchanged (within the margin, or an exact count that did not move).
    Unchanged,
}

impl Standing {
    /// Rows a report shows at once; the others it may fold.
    pub fn is_decided(self) -> bool {
        self <= Standing::OneSided
    }
}

/// Where `r` stands.
pub fn standing(r: &BenchmarkResult) -> Standing {
    match r.verdict {
        VerdictKind::Slower => Standing::Regression,
        VerdictKind::Faster => Standing::Improvement,
        VerdictKind::Exact if is_regression_ignoring_gate(r) => Standing::Regression,
        VerdictKind::Exact if exact_changed(r) => Standing::Improvement,
        // Not slower than the tolerance: decided for the gate, folded with the unchanged.
        VerdictKind::Exact | VerdictKind::Equivalent | VerdictKind::NotSlower => {
            Standing::Unchanged
        }
        VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => Standing::OneSided,
        VerdictKind::NoResultYet | VerdictKind::BelowResolution | VerdictKind::NotAnalysed => {
            Standing::Undecided
        }
    }
}

/// Indices of `results` in report order: by standing, gated rows first, then the largest
/// change, then by name and metric (so equal inputs always print the same).
pub fn report_order(results: &[BenchmarkResult]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..results.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&results[a], &results[b]);
        let size = |r: &BenchmarkResult| r.change_pct.map_or(0.0, f64::abs);
        standing(x)
            .cmp(&standing(y))
            .then(y.gated.cmp(&x.gated))
            .then(size(y).total_cmp(&size(x)))
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.metric.cmp(&y.metric))
    });
    order
}

/// One line a maintainer reads first: the benchmarks counted by where they stand (each once,
/// its metrics inside), with the worst regression and the best improvement and their intervals.
pub fn summary(results: &[BenchmarkResult]) -> Option<String> {
    let benchmarks = words::benchmark_standings(results).len();
    if benchmarks == 0 {
        return None;
    }
    let mut line = format!(
        "{benchmarks} benchmark{}: {}",
        if benchmarks == 1 { "" } else { "s" },
        words::tally(results)
    );
    let order = report_order(results);
    // Gated rows only: a slower peak memory must not read like the failed gate.
    let first = |s: Standing| {
        order
            .iter()
            .map(|&i| &results[i])
            .find(|r| r.gated && standing(r) == s)
    };
    if let Some(r) = first(Standing::Regression) {
        line.push_str(&format!(
            "; worst: {} {} {}",
            r.name,
            r.metric,
            words::change(r)
        ));
    }
    if let Some(r) = first(Standing::Improvement) {
        line.push_str(&format!(
            "; best: {} {} {}",
            r.name,
            r.metric,
            words::change(r)
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_api::Direction;

    fn row(name: &str, verdict: VerdictKind, change: Option<f64>, gated: bool) -> BenchmarkResult {
        BenchmarkResult {
            name: name.into(),
            metric: "time".into(),
            verdict,
            change_pct: change,
            gated,
            direction: Direction::LowerIsBetter,
            ..BenchmarkResult::unanalysed(
                name,
                "time",
                "ns",
                Direction::LowerIsBetter,
                verdict,
                "x".into(),
            )
        }
    }

    #[test]
    fn regressions_lead_largest_first_and_the_rest_follows_by_standing() {
        let results = vec![
            row("same", VerdictKind::Equivalent, Some(0.1), true),
            row("small-slower", VerdictKind::Slower, Some(3.0), true),
            row("undecided", VerdictKind::NoResultYet, Some(9.0), true),
            row("faster", VerdictKind::Faster, Some(-5.0), true),
            row("big-slower", VerdictKind::Slower, Some(30.0), true),
            row("ungated-slower", VerdictKind::Slower, Some(50.0), false),
        ];
        let names: Vec<&str> = report_order(&results)
            .into_iter()
            .map(|i| results[i].name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "big-slower",
                "small-slower",
                "ungated-slower",
                "faster",
                "undecided",
                "same"
            ]
        );
        let line = summary(&results).unwrap();
        assert!(
            line.starts_with(
                "6 benchmarks: 2 slower, 1 faster, 1 no change, 1 no result yet, 1 not gated; \
                 worst: big-slower time"
            ),
            "{line}"
        );
        assert!(line.contains("; best: faster time"), "{line}");
    }
}
