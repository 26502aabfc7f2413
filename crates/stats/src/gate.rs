//! The gate: which rows of a comparison decide it, which of those many-benchmark testing
//! selects, whether a row is a regression, and what the comparison concludes. The one place
//! this is decided: `benchgate compare`/`analyze` exit codes and the server's check run both
//! call it.

use benchgate_api::{BenchmarkResult, Direction, FailOn, RuleSet, VerdictKind};

use crate::multiplicity::e_benjamini_hochberg;

pub use crate::TIME_METRICS;

use benchgate_api::counts::INSTRUCTIONS;

/// Metrics that never gate: they describe how the benchmark was prepared, not what it measures.
pub const NEVER_GATED: [&str; 1] = ["build_time"];

/// Per `(benchmark, metric)`: whether it gates — the metric its rule names (`metric = …`),
/// else what `[gate] gate_on` names (its counted instructions, time, or both) where the
/// benchmark has it, else the benchmark's time metric when it reports one, otherwise every
/// metric it reports (except [`NEVER_GATED`]). A rule's `gate = false` or `ignore` is applied by [`mark_gate`].
pub fn gated_mask(keys: &[(&str, &str)], rules: &RuleSet) -> Vec<bool> {
    let is_time = |m: &str| TIME_METRICS.contains(&m);
    keys.iter()
        .map(|&(benchmark, metric)| {
            if let Some(chosen) = rules
                .first_match(benchmark)
                .and_then(|(_, r)| r.metric.as_deref())
            {
                return metric == chosen;
            }
            if NEVER_GATED.contains(&metric) {
                return false;
            }
            let has = |wanted: &dyn Fn(&str) -> bool| {
                keys.iter().any(|&(b, m)| b == benchmark && wanted(m))
            };
            let counted = |m: &str| m == INSTRUCTIONS;
            let gate_on = rules.gate_on();
            // `gate_on` picks the tier where the benchmark has it; one without a count (its
            // counting failed) is gated on its time rather than not at all.
            if gate_on.counts() && has(&counted) {
                return counted(metric) || (gate_on.time() && is_time(metric));
            }
            let has_time = has(&is_time);
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

/// Sets `rule`, `gated` and `selected` on every row of one comparison (one runner's rows). A
/// row that could not be analysed keeps its `gated` mark (so the gate reports it undecided) but
/// is never selected; a benchmark on one side only never gates, nor does one whose rule says
/// `gate = false` or `ignore = true`.
pub fn mark_gate(results: &mut [BenchmarkResult], alpha: f64, rules: &RuleSet) {
    let keys: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r.name.as_str(), r.metric.as_str()))
        .collect();
    let mask = gated_mask(&keys, rules);
    for (r, gated) in results.iter_mut().zip(mask) {
        r.rule = rules.applied(&r.name);
        let ruled_out = r.rule.as_ref().is_some_and(|a| a.not_gated || a.ignored);
        r.gated = gated
            && !ruled_out
            && !matches!(r.verdict, VerdictKind::OnlyInBase | VerdictKind::OnlyInHead);
        r.selected = false;
    }
    crate::counts::note_counts(results, rules);
    let candidates: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].gated && results[i].verdict.is_analysed())
        .collect();
    let e: Vec<f64> = candidates.iter().map(|&i| results[i].e_value).collect();
    for (&i, s) in candidates.iter().zip(gate_selection(&e, alpha)) {
        results[i].selected = s;
    }
    crate::counts::note_timed_once(results, rules, waits_for_rounds);
}

/// Whether an exact (deterministic) row changed for the worse: a count that grew where lower
/// is better, or shrank where higher is better. No interval or selection is needed.
fn exact_got_worse(r: &BenchmarkResult) -> bool {
    let (Some(base), Some(head)) = (r.base_center, r.head_center) else {
        return false;
    };
    match r.direction {
        Direction::LowerIsBetter => head > base,
        Direction::HigherIsBetter => head < base,
    }
}

/// Whether the row got worse in performance terms, as a reader sees it, whether or not it
/// gates: a slower verdict, or an exact count that got worse.
pub fn is_regression_ignoring_gate(r: &BenchmarkResult) -> bool {
    match r.verdict {
        VerdictKind::Slower => true,
        VerdictKind::Exact => exact_got_worse(r),
        _ => false,
    }
}

/// Whether this row fails the gate under its rule's `fail_on`, else the comparison's `fail_on`:
/// a gated row that is slower in performance terms (selected by e-BH), or an exact count that
/// got worse.
pub fn is_regression(r: &BenchmarkResult, fail_on: FailOn) -> bool {
    let fail_on = r.rule.as_ref().and_then(|a| a.fail_on).unwrap_or(fail_on);
    let regressed = match r.verdict {
        VerdictKind::Slower => r.selected,
        VerdictKind::Exact => exact_got_worse(r),
        _ => false,
    };
    r.gated
        && regressed
        && match fail_on {
            FailOn::Regression => true,
            FailOn::PracticalRegression => r.practical,
            FailOn::Never => false,
        }
}

/// Whether an exact row changed at all, in either direction.
pub fn exact_changed(r: &BenchmarkResult) -> bool {
    r.verdict == VerdictKind::Exact && r.base_center != r.head_center
}

/// What a whole comparison concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateOutcome {
    /// A gated row is a regression: the check fails, `compare`/`analyze` exit 1.
    Fail,
    /// No regression, but a gated row is undecided or could not be analysed (or nothing
    /// gates): the check is neutral, the exit code 0.
    Undecided,
    /// Every gated row decided and none is a regression.
    Pass,
}

/// The benchmarks with a gated row still undecided (no result yet, below resolution, not
/// analysed), each once in row order; `None` when that is every benchmark the rows name, or
/// none: then there is nothing to narrow a round to.
pub fn undecided_benchmarks(results: &[BenchmarkResult]) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for r in results.iter().filter(|r| waits_for_rounds(r)) {
        if !names.contains(&r.name) {
            names.push(r.name.clone());
        }
    }
    let all: std::collections::BTreeSet<&str> = results.iter().map(|r| r.name.as_str()).collect();
    (!names.is_empty() && names.len() < all.len()).then_some(names)
}

/// Pairs needed before a "below this runner's resolution" verdict may end a session or be
/// held: a spread from a handful of pairs is too rough (one slow run inflates it).
pub const MIN_PAIRS_TO_GIVE_UP: usize = 10;

/// Keeps a row "below this runner's resolution" once it was given up on (with at least
/// [`MIN_PAIRS_TO_GIVE_UP`] pairs): its forecast hovers around the round cap as the spread
/// estimate moves, and a verdict that flips back to "no result yet" every few rounds helps no
/// one. `given_up` carries the `(benchmark, metric)` rows from one analysis to the next; a row
/// the interval decides since (slower, faster, equivalent, not slower) shows that instead.
pub fn hold_given_up(
    rows: &mut [BenchmarkResult],
    given_up: &mut std::collections::BTreeSet<(String, String)>,
) {
    for r in rows {
        let key = (r.name.clone(), r.metric.clone());
        if r.verdict == VerdictKind::BelowResolution && r.n >= MIN_PAIRS_TO_GIVE_UP {
            given_up.insert(key);
        } else if r.verdict == VerdictKind::NoResultYet && given_up.contains(&key) {
            r.verdict = VerdictKind::BelowResolution;
            r.rounds_needed = None;
        }
    }
}

/// Whether a gated row leaves the gate waiting: no verdict yet, or slower but neither
/// selected by e-BH nor shown within the tolerance. Not selected is no pass: e-BH declined to
/// call it a regression among the gated rows, which is not evidence that it is none; more
/// rounds raise its e-value until it is selected, or the session ends undecided
/// (docs/statistics.md §7). A slowdown whose worse bound is below the tolerance is the
/// tolerance's pass ("not slower than +T%") unless e-BH selects it.
pub fn waits_for_rounds(r: &BenchmarkResult) -> bool {
    r.gated
        && match r.verdict {
            VerdictKind::NoResultYet | VerdictKind::BelowResolution | VerdictKind::NotAnalysed => {
                true
            }
            VerdictKind::Slower => !r.selected && !within_tolerance(r),
            _ => false,
        }
}

/// Whether the row's interval, on its worse side, stays below the gate's tolerance: at most
/// +T% of time, or a throughput at least 1/(1 + T) of the base's.
pub fn within_tolerance(r: &BenchmarkResult) -> bool {
    let Some(t) = r.tolerance_pct else {
        return false;
    };
    let limit = (1.0 + t / 100.0).ln();
    let log = |pct: f64| (1.0 + pct / 100.0).ln();
    match r.direction {
        benchgate_api::Direction::LowerIsBetter => {
            r.interval_pct[1].is_some_and(|h| log(h) < limit)
        }
        benchgate_api::Direction::HigherIsBetter => {
            r.interval_pct[0].is_some_and(|l| l > -100.0 && -log(l) < limit)
        }
    }
}

/// The comparison's conclusion from its rows (already marked by [`mark_gate`]).
pub fn outcome(results: &[BenchmarkResult], fail_on: FailOn) -> GateOutcome {
    if results.iter().any(|r| is_regression(r, fail_on)) {
        return GateOutcome::Fail;
    }
    let undecided = !results.iter().any(|r| r.gated) || results.iter().any(waits_for_rounds);
    if undecided {
        GateOutcome::Undecided
    } else {
        GateOutcome::Pass
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
            gated_mask(&keys, &RuleSet::default()),
            [true, false, false, true, false, true, false]
        );
    }

    #[test]
    fn gate_on_picks_the_counted_tier_where_a_benchmark_has_it() {
        use benchgate_api::GateOn;
        let keys = [
            ("command", "wall_time"),
            ("command", "instructions"),
            ("command", "cpu_time"),
            // Counting failed for this one: its time still gates.
            ("parse", "time"),
        ];
        let mask = |g: GateOn| gated_mask(&keys, &RuleSet::default().gating(g));
        assert_eq!(mask(GateOn::Time), [true, false, false, true]);
        assert_eq!(mask(GateOn::Instructions), [false, true, false, true]);
        assert_eq!(mask(GateOn::Both), [true, true, false, true]);
        // A rule's own metric still wins.
        let mut rule = benchgate_api::BenchmarkRule::matching("command");
        rule.metric = Some("cpu_time".into());
        let ruled = RuleSet::new(&[rule]).gating(GateOn::Instructions);
        assert_eq!(gated_mask(&keys, &ruled), [false, false, true, true]);
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

    fn exact(direction: Direction, base: f64, head: f64) -> BenchmarkResult {
        let mut r = BenchmarkResult::unanalysed(
            "alloc",
            "bytes_per_op",
            "bytes",
            direction,
            VerdictKind::Exact,
            String::new(),
        );
        (r.base_center, r.head_center, r.reason) = (Some(base), Some(head), None);
        (r.n, r.gated, r.practical) = (10, true, true);
        r
    }

    #[test]
    fn an_exact_count_fails_when_it_gets_worse_in_its_own_direction() {
        let cases = [
            (Direction::LowerIsBetter, 0.0, 16.0, true),
            (Direction::LowerIsBetter, 16.0, 0.0, false),
            (Direction::LowerIsBetter, 16.0, 16.0, false),
            (Direction::HigherIsBetter, 16.0, 8.0, true),
            (Direction::HigherIsBetter, 8.0, 16.0, false),
        ];
        for (direction, base, head, fails) in cases {
            let rows = [exact(direction, base, head)];
            assert_eq!(
                is_regression(&rows[0], FailOn::Regression),
                fails,
                "{direction:?} {base} -> {head}"
            );
            let expected = if fails {
                GateOutcome::Fail
            } else {
                GateOutcome::Pass
            };
            assert_eq!(outcome(&rows, FailOn::Regression), expected);
            assert_ne!(outcome(&rows, FailOn::Never), GateOutcome::Fail);
        }
    }

    #[test]
    fn a_gated_row_that_cannot_be_analysed_leaves_the_gate_undecided() {
        let mut rows = vec![
            exact(Direction::LowerIsBetter, 5.0, 5.0),
            BenchmarkResult::unanalysed(
                "parse",
                "time",
                "ns",
                Direction::LowerIsBetter,
                VerdictKind::NotAnalysed,
                "1 pair; needs 2".into(),
            ),
            BenchmarkResult::unanalysed(
                "new_bench",
                "time",
                "ns",
                Direction::LowerIsBetter,
                VerdictKind::OnlyInHead,
                "added in head".into(),
            ),
        ];
        mark_gate(&mut rows, 0.05, &RuleSet::default());
        assert_eq!(
            rows.iter().map(|r| r.gated).collect::<Vec<_>>(),
            [true, true, false]
        );
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Undecided);
        rows.remove(1);
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Pass);
    }

    /// A real +24% seen in 7 pairs among 11 gated rows: slower, but e-BH does not select it
    /// yet. The gate waits (and the row keeps running); it neither fails nor passes.
    #[test]
    fn a_slower_row_e_bh_has_not_selected_keeps_the_gate_waiting() {
        let mut rows = vec![
            slower("encode", "time", true),
            slower("decode", "time", true),
        ];
        rows[0].e_value = 30.0;
        rows[1].verdict = VerdictKind::NotSlower;
        rows[1].e_value = 0.5;
        mark_gate(&mut rows, 0.05, &RuleSet::default());
        assert!(!rows[0].selected, "30 is below e-BH's bar of 2/0.05 = 40");
        assert!(waits_for_rounds(&rows[0]));
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Undecided);
        assert_eq!(undecided_benchmarks(&rows), Some(vec!["encode".to_owned()]));
        // Its worse bound below a 5% tolerance: the tolerance's pass, unless e-BH selects it.
        rows[0].tolerance_pct = Some(5.0);
        rows[0].interval_pct = [Some(0.44), Some(3.8)];
        assert!(!waits_for_rounds(&rows[0]));
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Pass);
        rows[0].interval_pct = [Some(0.45), Some(52.0)];
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Undecided);
        rows[0].e_value = 1e4;
        mark_gate(&mut rows, 0.05, &RuleSet::default());
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Fail);
    }

    fn rule(pattern: &str) -> benchgate_api::BenchmarkRule {
        benchgate_api::BenchmarkRule::matching(pattern)
    }

    fn slower(name: &str, metric: &str, practical: bool) -> BenchmarkResult {
        let mut r = exact(Direction::LowerIsBetter, 1.0, 2.0);
        (r.name, r.metric, r.verdict, r.practical) =
            (name.into(), metric.into(), VerdictKind::Slower, practical);
        r.e_value = 1e6;
        r
    }

    #[test]
    fn rules_decide_which_rows_gate_and_how_the_first_match_wins() {
        let rules = RuleSet::new(&[
            benchgate_api::BenchmarkRule {
                gate: false,
                ..rule("parse_*")
            },
            benchgate_api::BenchmarkRule {
                ignore: true,
                ..rule("flaky*")
            },
            benchgate_api::BenchmarkRule {
                fail_on: Some(FailOn::PracticalRegression),
                ..rule("small_*")
            },
            benchgate_api::BenchmarkRule {
                metric: Some("instructions".into()),
                ..rule("*")
            },
        ]);
        let mut rows = vec![
            slower("parse_json", "time", true),
            slower("flaky", "time", true),
            slower("small_vec", "time", false),
            slower("sort", "time", false),
            slower("sort", "instructions", false),
        ];
        mark_gate(&mut rows, 0.05, &rules);
        let numbers: Vec<_> = rows
            .iter()
            .map(|r| r.rule.as_ref().unwrap().number)
            .collect();
        assert_eq!(numbers, [1, 2, 3, 4, 4]);
        let gated: Vec<_> = rows.iter().map(|r| r.gated).collect();
        // small_vec's own rule comes first, so rule 4's metric does not apply to it.
        assert_eq!(gated, [false, false, true, false, true]);
        let fails: Vec<_> = rows
            .iter()
            .map(|r| is_regression(r, FailOn::Regression))
            .collect();
        assert_eq!(fails, [false, false, false, false, true]);
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Fail);
        rows.truncate(4);
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Pass);
    }
}
