//! Counted rows (the exact tier) beside their benchmark's time: a count that differed between
//! the runs of one side is no exact answer, so the benchmark is gated on its time instead; and
//! a time that grew while the count did not is said to be something counts cannot see.

use benchgate_api::counts::INSTRUCTIONS;
use benchgate_api::{BenchmarkResult, RuleSet, VerdictKind};

use crate::TIME_METRICS;

/// Why a counted row is read as a timing.
pub const NOT_DETERMINISTIC: &str = "the counts differ between runs of one side: not \
     deterministic (threads, time-dependent work, random seeds), so read as a timing";

/// Added when `gate_on` named the counts and the benchmark's time gates instead.
pub const GATED_ON_TIME: &str = "the gate judges this benchmark on its time";

/// What a slower time with no more instructions points at.
pub const NOT_IN_THE_COUNT: &str = "no more instructions, yet slower: I/O, memory or contention?";

/// The tail guard of a row of `metric`: none for counts. A counted row has a few runs a side
/// by design (more timed rounds add none), so a guard asking 72 runs would hold every pass
/// back for good; the time beside it keeps the guard.
pub fn tail_guard(metric: &str, guard: Option<f64>) -> Option<f64> {
    guard.filter(|_| metric != INSTRUCTIONS)
}

/// The planned pairs the sequence of a row of `metric` is tuned for: a counted row's own
/// `MAX_COUNTED_RUNS`, known before any count (§2 keeps the tuning fixed in advance), so a count
/// that wobbles by a few instructions reaches the evidence e-BH asks in the runs it has: at
/// n* = 20 six pairs give a Bayes factor of at most 22, at n* = 6 up to 257.
pub fn n_star(metric: &str, planned: f64) -> f64 {
    if metric == INSTRUCTIONS {
        f64::from(benchgate_api::counts::MAX_COUNTED_RUNS)
    } else {
        planned
    }
}

/// Why a benchmark's time has too few rounds to analyse when its count answered the gate.
pub const TIMED_ONCE: &str =
    "timed once: the count answered the gate first (gate_on = \"instructions\")";

/// Applies the notes to one comparison's rows, after the gate marked them and before the
/// selection: idempotent, so a report marked twice says each once. The gate moves to the time
/// only where `gate_on` chose the count; a rule that names the metric keeps it.
pub fn note_counts(results: &mut [BenchmarkResult], rules: &RuleSet) {
    let is_time = |r: &BenchmarkResult| TIME_METRICS.contains(&r.metric.as_str());
    let counted = |r: &BenchmarkResult| r.metric == INSTRUCTIONS;
    for i in 0..results.len() {
        let r = &results[i];
        if !(counted(r) && r.verdict.is_analysed() && r.verdict != VerdictKind::Exact) {
            continue;
        }
        let name = r.name.clone();
        let by_rule = rules
            .first_match(&name)
            .is_some_and(|(_, rule)| rule.metric.is_some());
        // A count that wobbles but still decided keeps the gate; one left undecided (more
        // timed rounds add no counted runs) hands it to the time.
        let undecided = matches!(
            r.verdict,
            VerdictKind::NoResultYet | VerdictKind::BelowResolution
        );
        let handed = r.gated && rules.gate_on().counts() && !by_rule && undecided;
        let row = &mut results[i];
        row.rounds_needed = None;
        if !row.warnings.iter().any(|w| w == NOT_DETERMINISTIC) {
            row.warnings.push(NOT_DETERMINISTIC.to_owned());
        }
        let time = results.iter().position(|t| t.name == name && is_time(t));
        if let Some(t) = time.filter(|_| handed) {
            results[i].gated = false;
            if !results[i].warnings.iter().any(|w| w == GATED_ON_TIME) {
                results[i].warnings.push(GATED_ON_TIME.to_owned());
            }
            let ruled_out = results[t]
                .rule
                .as_ref()
                .is_some_and(|a| a.not_gated || a.ignored);
            results[t].gated = !ruled_out;
        }
    }
    for i in 0..results.len() {
        let r = &results[i];
        if !(is_time(r) && r.verdict == VerdictKind::Slower) {
            continue;
        }
        let unchanged = results.iter().any(|c| {
            c.name == r.name
                && counted(c)
                && c.verdict == VerdictKind::Exact
                && matches!((c.base_center, c.head_center), (Some(b), Some(h)) if h <= b)
        });
        if unchanged && !results[i].warnings.iter().any(|w| w == NOT_IN_THE_COUNT) {
            results[i].warnings.push(NOT_IN_THE_COUNT.to_owned());
        }
    }
}

/// After the selection: a time left with too few rounds because its benchmark's count
/// answered the gate first says so, instead of "at least 2 are needed".
/// `waits` is the gate's own test of a row still waiting for rounds.
pub fn note_timed_once(
    results: &mut [BenchmarkResult],
    rules: &RuleSet,
    waits: fn(&BenchmarkResult) -> bool,
) {
    let counted = |r: &BenchmarkResult| r.metric == INSTRUCTIONS;
    let answered: Vec<String> = results
        .iter()
        .filter(|c| counted(c) && c.gated && c.verdict.is_analysed() && !waits(c))
        .map(|c| c.name.clone())
        .collect();
    for r in results.iter_mut() {
        if !rules.gate_on().time()
            && r.verdict == VerdictKind::NotAnalysed
            && r.n < 2
            && answered.contains(&r.name)
        {
            r.reason = Some(TIMED_ONCE.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{GateOutcome, mark_gate, outcome};
    use benchgate_api::{FailOn, GateOn};

    fn row(metric: &str, verdict: VerdictKind, base: f64, head: f64) -> BenchmarkResult {
        let mut r = BenchmarkResult::unanalysed(
            "command",
            metric,
            "ns",
            Default::default(),
            verdict,
            String::new(),
        );
        (r.base_center, r.head_center, r.n, r.reason) = (Some(base), Some(head), 2, None);
        r.change_pct = Some(100.0 * (head / base - 1.0));
        r.rounds_needed = Some(20);
        r
    }

    #[test]
    fn a_count_that_differs_between_runs_hands_the_gate_to_the_time() {
        let mut rows = [
            row("wall_time", VerdictKind::Slower, 50.0, 60.0),
            row("instructions", VerdictKind::NoResultYet, 3.0e7, 3.1e7),
        ];
        rows[0].e_value = 1e6;
        let rules = RuleSet::default().gating(GateOn::Instructions);
        mark_gate(&mut rows, 0.05, &rules);
        mark_gate(&mut rows, 0.05, &rules);
        assert!(rows[0].gated && !rows[1].gated);
        assert_eq!(rows[1].warnings, [NOT_DETERMINISTIC, GATED_ON_TIME]);
        assert_eq!(
            rows[1].rounds_needed, None,
            "more rounds never add counted runs"
        );
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Fail);
    }

    #[test]
    fn a_slower_time_with_an_unchanged_count_is_said_to_be_beyond_the_count() {
        let mut rows = [
            row("wall_time", VerdictKind::Slower, 50.0, 60.0),
            row("instructions", VerdictKind::Exact, 3.0e7, 3.0e7),
        ];
        rows[0].e_value = 1e6;
        mark_gate(&mut rows, 0.05, &RuleSet::default());
        assert_eq!(rows[0].warnings, [NOT_IN_THE_COUNT]);
        assert!(rows[1].warnings.is_empty());
        // A count that grew explains the time: nothing to add.
        let mut grew = rows.clone();
        grew[0].warnings.clear();
        grew[1].head_center = Some(3.3e7);
        mark_gate(&mut grew, 0.05, &RuleSet::default());
        assert!(grew[0].warnings.is_empty());
    }

    #[test]
    fn counted_rows_have_no_tail_guard_and_are_tuned_for_their_own_runs() {
        assert_eq!(tail_guard(INSTRUCTIONS, Some(0.05)), None);
        assert_eq!(tail_guard("wall_time", Some(0.05)), Some(0.05));
        assert_eq!(n_star(INSTRUCTIONS, 20.0), 6.0);
        assert_eq!(n_star("time", 20.0), 20.0);
    }

    #[test]
    fn a_time_cut_short_by_the_counts_says_so() {
        let mut rows = [
            row("wall_time", VerdictKind::NotAnalysed, 50.0, 60.0),
            row("instructions", VerdictKind::Exact, 3.0e7, 3.3e7),
        ];
        rows[0].n = 1;
        mark_gate(
            &mut rows,
            0.05,
            &RuleSet::default().gating(GateOn::Instructions),
        );
        assert_eq!(rows[0].reason.as_deref(), Some(TIMED_ONCE));
        assert_eq!(outcome(&rows, FailOn::Regression), GateOutcome::Fail);
    }
}
