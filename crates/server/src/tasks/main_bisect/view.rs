//! A culprit search as the API and the dashboard show it.

use benchgate_store::model::{Bisection, BisectionProbe, BisectionState, RangeCommit};
use serde::Serialize;

use super::outcome::SearchOutcome;
use super::wording::{describe, summary};

/// A search as the API and the dashboard show it.
#[derive(Debug, Clone, Serialize)]
pub struct SearchView {
    pub id: i64,
    pub benchmark: String,
    pub metric: String,
    pub runner_label: String,
    pub suite: String,
    pub regression_id: Option<i64>,
    pub good: String,
    pub bad: String,
    pub state: BisectionState,
    /// The range, good first; empty until read.
    pub commits: Vec<RangeCommit>,
    pub outcome: Option<SearchOutcome>,
    pub probes: Vec<BisectionProbe>,
    pub requested_by: Option<String>,
    /// One line: how it ended, or where it stands.
    pub summary: String,
    /// Markdown, as the episode's issue shows it.
    #[serde(skip)]
    pub text: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl SearchView {
    pub fn new(b: &Bisection, probes: Vec<BisectionProbe>) -> SearchView {
        let outcome = b.outcome.clone();
        SearchView {
            id: b.id,
            benchmark: b.benchmark.clone(),
            metric: b.metric.clone(),
            runner_label: b.series.runner_label.clone(),
            suite: b.series.suite.clone(),
            regression_id: b.regression_id,
            good: b.good_sha.clone(),
            bad: b.bad_sha.clone(),
            state: b.state,
            commits: b.commits.clone().unwrap_or_default(),
            summary: summary(outcome.as_ref(), &probes),
            text: describe(b, &probes),
            outcome,
            probes,
            requested_by: b.requested_by.clone(),
            created_at: b.created_at,
        }
    }
}
