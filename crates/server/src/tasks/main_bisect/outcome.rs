//! How a culprit search ended, with its commits named: the stored [`SearchOutcome`] (its type
//! is the store's, so a row is read typed or not at all) made from the statistics' answer.

use benchgate_stats::Interval;
use benchgate_stats::bisect::Outcome;
use benchgate_store::model::{Bisection, BisectionProbe, ProbeState, RangeCommit};
pub use benchgate_store::model::{OutcomeKind, SearchOutcome, SkippedCommit};

use crate::comparison_analysis::ALPHA;

/// The outcome of a search that could not run, and why.
pub(super) fn failed(search: &Bisection, reason: String) -> SearchOutcome {
    SearchOutcome {
        kind: OutcomeKind::Failed,
        commit: None,
        change: None,
        lower: None,
        upper: None,
        after: None,
        upto: None,
        skipped: Vec::new(),
        commits: search
            .commits
            .as_ref()
            .map_or(0, |c| c.len().saturating_sub(1)),
        probes: 0,
        rounds: 0,
        alpha: ALPHA,
        reason: Some(reason),
    }
}

/// The outcome with commits named and the probes' skips listed.
pub(super) fn outcome_view(
    commits: &[RangeCommit],
    outcome: &Outcome,
    probes: &[BisectionProbe],
) -> SearchOutcome {
    let pct = |i: &Interval| (i.lower.exp_m1(), i.upper.exp_m1());
    let mid = |i: &Interval| (0.5 * (i.lower + i.upper)).exp_m1();
    let skipped = probes
        .iter()
        .filter(|p| p.state == ProbeState::Skipped)
        .map(|p| SkippedCommit {
            sha: p.newer_sha.clone(),
            note: p.note.clone().unwrap_or_default(),
        })
        .collect();
    let mut view = SearchOutcome {
        kind: OutcomeKind::Failed,
        commit: None,
        change: None,
        lower: None,
        upper: None,
        after: None,
        upto: None,
        skipped,
        commits: commits.len() - 1,
        // Every probe asked, a skipped one too; the rounds they spent.
        probes: probes.len(),
        rounds: probes.iter().map(|p| p.rounds.max(0) as u64).sum(),
        alpha: ALPHA,
        reason: None,
    };
    let named = |view: &mut SearchOutcome, index: usize, step: &Interval| {
        view.commit = Some(commits[index].clone());
        view.change = Some(mid(step));
        let (l, u) = pct(step);
        (view.lower, view.upper) = (Some(l), Some(u));
    };
    match outcome {
        Outcome::Culprit { index, step } => {
            view.kind = OutcomeKind::Culprit;
            named(&mut view, *index, step);
        }
        Outcome::Spread { index, step } => {
            view.kind = OutcomeKind::Spread;
            named(&mut view, *index, step);
        }
        Outcome::NoRegression { range } => {
            view.kind = OutcomeKind::NoRegression;
            view.change = Some(mid(range));
            let (l, u) = pct(range);
            (view.lower, view.upper) = (Some(l), Some(u));
        }
        Outcome::Undecided { after, upto } | Outcome::Skipped { after, upto, .. } => {
            view.kind = if matches!(outcome, Outcome::Undecided { .. }) {
                OutcomeKind::Undecided
            } else {
                OutcomeKind::Skipped
            };
            view.after = Some(commits[*after].sha.clone());
            view.upto = Some(commits[*upto].sha.clone());
        }
    }
    view
}
