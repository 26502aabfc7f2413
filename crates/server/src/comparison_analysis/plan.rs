//! The rounds a new comparison plans before any A/B data, from its runners' A/A floors.

use std::collections::BTreeMap;
use std::sync::Arc;

use benchgate_store::{RepositoryId, Store, StoreError};

use super::{ALPHA, ROUNDS_CAP, stats_floor};

/// What a new comparison plans before any A/B data: n* per benchmark, from the noisiest
/// current floor of that benchmark's gated metric among the label's runners on this repository
/// (peak memory or CPU time never plan the rounds of a timing), and the largest of them as the
/// comparison's `planned_rounds`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoundPlan {
    pub per_benchmark: BTreeMap<String, i64>,
    /// `None` when no runner has a floor yet (the default `n*` applies).
    pub planned_rounds: Option<i64>,
}

/// Plans the rounds of a new comparison (see [`RoundPlan`]), each benchmark for the margin and
/// gated metric its rule sets.
pub async fn plan_rounds(
    store: &Arc<dyn Store>,
    repository_id: RepositoryId,
    runner_label: &str,
    min_effect: f64,
    rules: &benchgate_api::RuleSet,
) -> Result<RoundPlan, StoreError> {
    let mut floors: Vec<benchgate_store::NoiseFloor> = Vec::new();
    for runner in store.list_runners().await? {
        if runner.revoked_at.is_some() || !runner.labels.iter().any(|l| l == runner_label) {
            continue;
        }
        // Floors of other repositories measure other programs.
        floors.extend(
            store
                .runner_noise_floors(runner.id)
                .await?
                .into_iter()
                .filter(|f| f.key.repository_id == repository_id),
        );
    }
    let keyed: Vec<((&str, &str), benchgate_stats::NoiseFloor)> = floors
        .iter()
        .map(|f| {
            let key = (f.key.benchmark.as_str(), f.key.metric.as_str());
            (key, stats_floor(f))
        })
        .collect();
    let mut plan = RoundPlan {
        per_benchmark: benchgate_stats::plan_per_benchmark(
            &keyed, rules, min_effect, ALPHA, ROUNDS_CAP,
        )
        .into_iter()
        .map(|(benchmark, n)| (benchmark, n as i64))
        .collect(),
        planned_rounds: None,
    };
    plan.planned_rounds = plan.per_benchmark.values().copied().max();
    Ok(plan)
}
