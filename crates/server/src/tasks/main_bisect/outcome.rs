//! How a culprit search ended, as stored and as the API shows it, with its commits named.

use benchgate_stats::Interval;
use benchgate_stats::bisect::Outcome;
use benchgate_store::model::{Bisection, BisectionProbe, ProbeState, RangeCommit};
use serde::{Deserialize, Serialize};

use crate::comparison_analysis::ALPHA;

/// How a search ended, as stored and as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    pub kind: OutcomeKind,
    /// The named commit (culprit), or the one that takes the regression past τ (spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<RangeCommit>,
    /// That commit's own change (ratio − 1) and interval; for `no_regression`, the range's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// The commits still suspected: after `after`, up to and including `upto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upto: Option<String>,
    #[serde(default)]
    pub skipped: Vec<SkippedCommit>,
    /// Commits in the range (the good one not counted).
    pub commits: usize,
    pub probes: usize,
    pub rounds: u64,
    /// The search's error budget: a named culprit is wrong with probability at most this.
    pub alpha: f64,
    /// Why a search could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Culprit,
    Spread,
    NoRegression,
    Undecided,
    Skipped,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedCommit {
    pub sha: String,
    pub note: String,
}

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
