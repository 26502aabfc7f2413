//! Where a comparison's gate stands during its rounds: whether its jobs stop once it has an
//! answer, and which benchmarks are still undecided (the agent measures only those).

use std::sync::Arc;

use benchgate_api::BenchmarkResult;
use benchgate_store::{ComparisonId, Store, StoreError};

/// Whether a comparison's jobs end once its gate has an answer ([`gate_answered`]): a pull
/// request's, whose author waits on it, and a canary's, which audits what a pull request gets.
/// Merge groups, main's history, culprit probes and layout sessions run their planned rounds.
pub fn stops_when_decided(config: &benchgate_api::agent::StoredComparisonConfig) -> bool {
    use benchgate_api::agent::Purpose;
    matches!(config.purpose(), Purpose::PullRequest | Purpose::Canary)
}

/// Where the gate stands on one runner after an upload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateProgress {
    /// A gated row fails, or every gated row is decided (the check would pass). More rounds
    /// cannot undo either: the intervals are valid at any stopping time (docs/statistics.md
    /// §4b).
    pub answered: bool,
    /// The benchmarks still undecided when others are decided (at most
    /// [`MAX_UNDECIDED_NAMED`] of them; more: `None`, every benchmark runs).
    pub undecided: Option<Vec<String>>,
}

/// Most benchmark names an upload receipt lists for the next round.
pub const MAX_UNDECIDED_NAMED: usize = 1000;

/// Where the gate stands for `runner` in comparison `id`: its own stored rows, or the rows of
/// its hardware group, stored under the group's first runner and naming every member. Read
/// from the store, not from this process's analysis: another replica may have stored a newer
/// one.
pub async fn gate_progress(
    store: &Arc<dyn Store>,
    id: ComparisonId,
    runner: &benchgate_store::model::Runner,
) -> Result<GateProgress, StoreError> {
    let Some(comparison) = store.comparison(id).await? else {
        return Ok(GateProgress::default());
    };
    let rows: Vec<BenchmarkResult> = store
        .comparison_results(id)
        .await?
        .into_iter()
        .filter(|r| r.runner_id == runner.id || r.result.runners.contains(&runner.name))
        .map(|r| r.result)
        .collect();
    let outcome = benchgate_stats::outcome(&rows, comparison.config.gate.fail_on);
    // Under `[gate] claims = "require"` a claim not shown yet keeps its benchmark running;
    // a failing gate is an answer whatever the claims.
    let claims = pending_claims(&comparison.config, &rows);
    let answered = !rows.is_empty()
        && match outcome {
            benchgate_stats::GateOutcome::Fail => true,
            benchgate_stats::GateOutcome::Pass => claims.is_empty(),
            benchgate_stats::GateOutcome::Undecided => false,
        };
    let mut waiting = benchgate_stats::undecided_benchmarks(&rows).unwrap_or_default();
    for name in claims {
        if !waiting.contains(&name) {
            waiting.push(name);
        }
    }
    let all: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let undecided =
        (!waiting.is_empty() && waiting.len() < all.len() && waiting.len() <= MAX_UNDECIDED_NAMED)
            .then_some(waiting);
    Ok(GateProgress {
        answered,
        undecided,
    })
}

/// The benchmarks whose claim (from the PR description) is not shown yet, under
/// `[gate] claims = "require"`; empty otherwise.
fn pending_claims(
    config: &benchgate_api::agent::StoredComparisonConfig,
    rows: &[BenchmarkResult],
) -> Vec<String> {
    let Some(github) = config
        .github
        .as_ref()
        .filter(|_| config.config.gate.claims == benchgate_api::agent::ClaimsMode::Require)
    else {
        return Vec::new();
    };
    crate::report::pr_claims_answered(github, rows)
        .into_iter()
        .filter(|c| c.answer.as_deref() == Some(benchgate_claims::Answer::NotShownYet.words()))
        .filter_map(|c| c.benchmark)
        .collect()
}

/// Whether `runner`'s stored rows of comparison `id` hold the suite's counted runs already
/// (both runs of each side, for every counted row): a later job of it (`/rebench`) then only
/// times, since counting again under Valgrind costs minutes and adds nothing to an exact row.
pub async fn counted_already(
    store: &Arc<dyn Store>,
    id: ComparisonId,
    runner: &benchgate_store::model::Runner,
    metric: &str,
) -> Result<bool, StoreError> {
    let counted: Vec<usize> = store
        .comparison_results(id)
        .await?
        .into_iter()
        .filter(|r| r.runner_id == runner.id || r.result.runners.contains(&runner.name))
        .filter(|r| r.result.metric == metric)
        .map(|r| r.result.n)
        .collect();
    let runs = benchgate_api::counts::COUNTED_RUNS as usize;
    Ok(!counted.is_empty() && counted.iter().all(|&n| n >= runs))
}

/// Whether the gate has its answer from `runner`'s stored results ([`GateProgress::answered`]).
pub async fn gate_answered(
    store: &Arc<dyn Store>,
    id: ComparisonId,
    runner: &benchgate_store::model::Runner,
) -> Result<bool, StoreError> {
    Ok(gate_progress(store, id, runner).await?.answered)
}

#[cfg(test)]
mod claim_tests {
    use super::*;
    use crate::report::fixtures::{example, result};
    use benchgate_api::VerdictKind;
    use benchgate_api::agent::{ClaimsMode, PullRequestContext, StoredComparisonConfig};

    /// Under `require`, a claim not shown yet names its benchmark for the next rounds; one
    /// answered names nothing; `report` never holds a benchmark back.
    #[test]
    fn a_required_claim_not_shown_yet_keeps_its_benchmark_running() {
        let mut config = StoredComparisonConfig::from(example().config);
        config.github = Some(PullRequestContext {
            body: "`render` is 30% faster and `parse` 4% faster.".into(),
            ..Default::default()
        });
        let rows = [
            result("render", VerdictKind::NoResultYet, -10.0, [-40.0, 5.0]),
            result("parse", VerdictKind::Faster, -4.0, [-5.0, -3.0]),
        ];
        assert!(pending_claims(&config, &rows).is_empty(), "report mode");
        config.config.gate.claims = ClaimsMode::Require;
        assert_eq!(pending_claims(&config, &rows), ["render"]);
        config.github.as_mut().unwrap().body = "`parse` is 4% faster.".into();
        assert!(pending_claims(&config, &rows).is_empty());
    }
}
