//! How the gate decides a row whose runs come in per-process modes, and when a pass may stand
//! (docs/statistics.md §4c, §4d): the worse bound of a mean with slow runs on one side, the
//! typical run beside the slow mode's frequency when both sides show the mode, the floor's
//! claims for large changes, and the tail guard that holds a pass until a slow mode that would
//! undo it would have shown.

use benchgate_api::{Direction, ModeShift};

use crate::confidence_sequence::{ConfidenceSequence, MixtureBoundary};
use crate::error::StatsError;
use crate::interval::Interval;
use crate::modes::{PairedModes, guard_runs};
use crate::verdict::{DecisionRule, Verdict};

/// What the gate's estimate is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Basis {
    /// The change of the geometric mean of all runs: every pair.
    #[default]
    Mean,
    /// Both sides show a slow mode: the change of the typical run (pairs in which both runs
    /// were typical), with the mode's frequency tested apart.
    TypicalRun,
}

/// A slow run on a side, with the mean judged (not both sides show the mode): right-skewed
/// log-ratios look calm until the tail shows, so the running intersection's worse bound still
/// holds the tight intervals of the rounds before the first slow run. The worse bound is this
/// round's (`current`) instead, or, wider when the slow runs are few, the typical run's bound
/// (alpha/2) plus what the slow runs can move the mean by (their shares' anytime bounds,
/// alpha/2). The better bound keeps the running intersection (slow runs only make the early
/// rounds look better). Any superset stays valid.
pub(crate) fn tail_interval(
    interval: Interval,
    current: Interval,
    d: &[f64],
    modes: &PairedModes,
    rule: &DecisionRule,
    (alpha, n_star): (f64, f64),
) -> Result<Interval, StatsError> {
    let bound = rule
        .worse_upper(current)
        .max(parts_bound(d, modes, rule, (alpha, n_star))?);
    Ok(widen_worse(interval, rule, bound))
}

/// The floor's sequence and the session's hold at once, so their intersection is valid; it
/// decides claims only (slower, faster), since a floor measured on a quieter machine would make
/// passes optimistic. `v` and `interval` stand unless the intersection claims what they do not.
pub(crate) fn floor_claim(
    v: Verdict,
    interval: Interval,
    floor_interval: Interval,
    mean: f64,
    rule: &DecisionRule,
) -> (Verdict, Interval) {
    let both = Interval {
        lower: interval.lower.max(floor_interval.lower).min(mean),
        upper: interval.upper.min(floor_interval.upper).max(mean),
    };
    let claim = |v: &Verdict| matches!(v, Verdict::Slower { .. } | Verdict::Faster { .. });
    match rule.decide(both) {
        Some(c) if claim(&c) && !claim(&v) => (c, both),
        _ => (v, interval),
    }
}

/// The verdict of a row judged on its typical run (both sides show the mode): rounds asked
/// count the rounds with a slow run too (`sizes`: all rounds, typical ones), and the slow
/// mode's frequency is weighed beside it ([`with_mode_frequency`]).
pub(crate) fn typical_run_verdict(
    v: Verdict,
    modes: &PairedModes,
    interval: Interval,
    rule: &DecisionRule,
    (n, typical): (usize, usize),
    alpha: f64,
) -> (Verdict, Option<ModeShift>) {
    let v = match v {
        Verdict::NoResultYet { rounds_needed } => Verdict::NoResultYet {
            rounds_needed: scale_rounds(rounds_needed, n, typical),
        },
        v => v,
    };
    let limit = rule.tolerance.unwrap_or(0.0).max(rule.margin);
    with_mode_frequency(
        v,
        modes,
        alpha,
        rule.margin,
        rule.worse_upper(interval),
        limit,
    )
}

/// The bound on the worse side of the mean change made of parts: the typical run's (pairs in
/// which both runs were typical, at alpha/2) plus [`PairedModes::mean_shift_upper`] (alpha/2).
/// `+∞` with fewer than two typical pairs.
pub(crate) fn parts_bound(
    d: &[f64],
    modes: &PairedModes,
    rule: &DecisionRule,
    (alpha, n_star): (f64, f64),
) -> Result<f64, StatsError> {
    let typical = typical_of(d, modes);
    if typical.len() < 2 {
        return Ok(f64::INFINITY);
    }
    let boundary = MixtureBoundary::tuned(alpha / 2.0, n_star)?;
    let sequence = ConfidenceSequence::from_log_ratios(boundary, 0.0, &typical)?;
    let location = rule.worse_upper(sequence.current_interval());
    Ok(location + modes.mean_shift_upper(alpha / 2.0))
}

/// `v` with an honest forecast when it is "no result yet" only because a side's rare slow runs
/// widen the worse bound: the interval without them (`unwidened`) would pass.
pub(crate) fn held_pass_forecast(
    v: Verdict,
    unwidened: Interval,
    d: &[f64],
    modes: &PairedModes,
    rule: &DecisionRule,
    tuning: (f64, f64),
) -> Result<Verdict, StatsError> {
    let held = matches!(v, Verdict::NoResultYet { .. })
        && rule.decide(unwidened).is_some_and(|p| p.is_pass());
    if !held {
        return Ok(v);
    }
    let limit = rule.tolerance.unwrap_or(0.0).max(rule.margin);
    let more = tail_rounds(d, modes, rule, tuning, limit)?;
    Ok(Verdict::NoResultYet {
        rounds_needed: more.unwrap_or(7 * d.len() as u64).max(1),
    })
}

/// Rounds more until [`parts_bound`] would let a pass stand within `limit`, the slow runs
/// keeping their shares and the typical run's interval narrowing as 1/√n: what "needs ~N more
/// rounds" says of a row a side's rare slow runs hold (the sequence's own forecast sees only
/// its boundary, and said "~1" round after round). `None` beyond 8× the rounds so far.
pub(crate) fn tail_rounds(
    d: &[f64],
    modes: &PairedModes,
    rule: &DecisionRule,
    (alpha, n_star): (f64, f64),
    limit: f64,
) -> Result<Option<u64>, StatsError> {
    let typical = typical_of(d, modes);
    if typical.len() < 2 {
        return Ok(None);
    }
    let boundary = MixtureBoundary::tuned(alpha / 2.0, n_star)?;
    let sequence = ConfidenceSequence::from_log_ratios(boundary, 0.0, &typical)?;
    let location = rule.worse_upper(sequence.current_interval());
    let mean = typical.iter().sum::<f64>() / typical.len() as f64;
    let centre = rule.worse_upper(Interval::point(mean));
    for scale in [1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0] {
        let bound = centre
            + (location - centre) / f64::sqrt(scale)
            + modes.mean_shift_upper_after(alpha / 2.0, scale);
        if bound <= limit {
            return Ok(Some(((scale - 1.0) * d.len() as f64).ceil() as u64));
        }
    }
    Ok(None)
}

/// The log-ratios of the pairs in which both runs were typical.
fn typical_of(d: &[f64], modes: &PairedModes) -> Vec<f64> {
    d.iter()
        .zip(modes.typical_pairs())
        .filter(|(_, t)| *t)
        .map(|(x, _)| *x)
        .collect()
}

/// `interval` with its worse-side bound set to `bound` (worse scale), never inside the better
/// bound.
fn widen_worse(interval: Interval, rule: &DecisionRule, bound: f64) -> Interval {
    match rule.direction {
        Direction::LowerIsBetter => Interval {
            lower: interval.lower,
            upper: bound.max(interval.lower),
        },
        Direction::HigherIsBetter => Interval {
            lower: (-bound).min(interval.upper),
            upper: interval.upper,
        },
    }
}

/// `rounds` more typical pairs, in rounds, when `judged` of `n` rounds so far were typical.
fn scale_rounds(rounds: u64, n: usize, judged: usize) -> u64 {
    let share = judged.max(1) as f64 / n.max(1) as f64;
    ((rounds as f64) / share).ceil() as u64
}

/// The typical run's verdict `v` beside the slow mode's frequency (both sides show the mode):
/// a mode more frequent on head at alpha/2 is a regression whatever the typical run did; less
/// frequent, an improvement where the typical run passes; and a pass waits while the pairs
/// lean towards head being slow more often (an e-value above 1), since the typical run alone
/// cannot see that.
fn with_mode_frequency(
    v: Verdict,
    modes: &PairedModes,
    alpha: f64,
    margin: f64,
    upper_worse: f64,
    limit: f64,
) -> (Verdict, Option<ModeShift>) {
    let threshold = 2.0 / alpha;
    let runs = modes.base.slow.len().max(1) as f64;
    // What the frequency change moves the mean by: (p_h − p_b)·Δ.
    let moved = (modes.head.slow_count() as f64 - modes.base.slow_count() as f64) / runs
        * modes.excess.unwrap_or(0.0);
    let is_pass = v.is_pass();
    if modes.e_more_on_head() >= threshold {
        let practical = v.is_practical() && matches!(v, Verdict::Slower { .. }) || moved > margin;
        return (Verdict::Slower { practical }, Some(ModeShift::MoreOnHead));
    }
    if matches!(v, Verdict::Slower { .. }) {
        return (v, None);
    }
    if is_pass && modes.e_less_on_head() >= threshold {
        let practical = v.is_practical() || -moved > margin;
        return (Verdict::Faster { practical }, Some(ModeShift::LessOnHead));
    }
    // The pass is of the typical run; it waits while the pairs lean towards head being slow
    // more often, or while the extra slow runs seen so far would carry the mean past the limit.
    if is_pass && (modes.e_more_on_head() > 1.0 || moved + upper_worse > limit) {
        return (Verdict::NoResultYet { rounds_needed: 1 }, None);
    }
    (v, None)
}

/// Holds a pass back until head has run often enough that a slow mode that would undo it
/// would have shown ([`crate::modes::guard_runs`]); the room is between the interval's bound
/// on the worse side and the pass's limit (the tolerance, else M).
pub(crate) fn tail_guard(
    v: Verdict,
    interval: Interval,
    rule: &DecisionRule,
    share: f64,
    alpha: f64,
    head_runs: usize,
) -> (Verdict, Option<u64>) {
    if !v.is_pass() {
        return (v, None);
    }
    let limit = rule.tolerance.unwrap_or(0.0).max(rule.margin);
    // The guard's miss and the interval's share one error budget: half of alpha each, so a
    // mode at the guard's share left unseen and an interval that misses add up to alpha.
    let need = guard_runs(share, limit - rule.worse_upper(interval), alpha / 2.0);
    if (head_runs as u64) < need {
        let rounds_needed = (need != u64::MAX).then(|| need - head_runs as u64);
        let held = match rounds_needed {
            Some(rounds_needed) => Verdict::NoResultYet { rounds_needed },
            None => Verdict::BelowResolution,
        };
        return (held, Some(need));
    }
    (v, None)
}

#[cfg(test)]
mod tests {
    use crate::analysis::{AnalysisOptions, analyze_pairs};
    use crate::verdict::Verdict;

    /// 144 pairs of a calm A/A (±1%) in which head ran 2 processes +85% and base none: the
    /// pass waits on the slow runs' share, and the forecast says how long that takes instead
    /// of "~1 more round" (what a recorded httparse A/A said at round 72 and again at 144).
    #[test]
    fn a_pass_held_by_one_sides_rare_slow_runs_forecasts_from_their_share() {
        let wobble = |i: usize| 1.0 + 0.01 * (((i * 37) % 17) as f64 / 8.0 - 1.0);
        let base: Vec<f64> = (0..144).map(|i| 100.0 * wobble(i)).collect();
        let mut head: Vec<f64> = (0..144).map(|i| 100.0 * wobble(i + 5)).collect();
        head[40] *= 1.85;
        head[110] *= 1.85;
        let opts = AnalysisOptions {
            tolerance: Some(0.05),
            rare_slow_runs: Some(0.05),
            ..AnalysisOptions::default()
        };
        let held = analyze_pairs(&base, &head, &opts, None).unwrap();
        let Verdict::NoResultYet { rounds_needed } = held.verdict else {
            panic!("{:?}", held.verdict);
        };
        assert!((20..=7 * 144).contains(&rounds_needed), "{rounds_needed}");
        // Without the slow runs the same session passes: the forecast is only for the hold.
        let calm: Vec<f64> = (0..144).map(|i| 100.0 * wobble(i + 5)).collect();
        let passed = analyze_pairs(&base, &calm, &opts, None).unwrap();
        assert!(passed.verdict.is_pass(), "{:?}", passed.verdict);
    }
}
