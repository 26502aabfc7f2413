//! Canaries pinned to their runner, their scored results, and forecasts settled by verdicts.

use crate::support::*;
use benchgate_api::VerdictKind;
use benchgate_api::agent::{CanarySpec, JobOutcome, PlantedBy};
use benchgate_store::*;
use std::sync::Arc;
use std::time::Duration;

pub async fn a_canary_is_pinned_to_its_runner_and_scored_once(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["x"]).await.runner;
    let mut new = comparison(&repo, None, &"b".repeat(40), "x", jobs(1, 3));
    new.config.canary = Some(CanarySpec {
        runner_id: r2.id.0,
        planted_pct: Some(5.0),
        planted_by: PlantedBy::Work,
    });
    let created = store.create_comparison(&new).await.unwrap();
    let lease = Duration::from_secs(60);
    // r1 serves the label but the canary measures r2.
    assert!(
        store
            .claim_job(r1.id, &labels(&["x"]), lease)
            .await
            .unwrap()
            .is_none()
    );
    let claimed = store
        .claim_job(r2.id, &labels(&["x"]), lease)
        .await
        .unwrap()
        .expect("r2 takes its canary");
    assert_eq!(claimed.job.comparison_id, Some(created.id));
    for k in 0..3 {
        store
            .upload_round(claimed.job.id, &claimed.lease, &round(k, 100.0, 105.0))
            .await
            .unwrap();
    }
    let since = chrono::Utc::now() - chrono::TimeDelta::hours(1);
    assert!(store.unscored_canaries(since, 10).await.unwrap().is_empty());
    store
        .complete_job(
            claimed.job.id,
            &claimed.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    let unscored = store.unscored_canaries(since, 10).await.unwrap();
    assert_eq!(
        unscored.iter().map(|c| c.id).collect::<Vec<_>>(),
        [created.id]
    );
    assert_eq!(
        unscored[0].config.canary.as_ref().map(|c| c.runner_id),
        Some(r2.id.0)
    );
    let listed = store.runner_canaries(r2.id, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(store.runner_canaries(r1.id, 10).await.unwrap().is_empty());

    let result = CanaryResult {
        comparison_id: created.id,
        runner_id: r2.id,
        benchmark: "parse".into(),
        metric: "time".into(),
        planted_pct: Some(5.0),
        verdict: VerdictKind::Slower,
        rounds: 3,
        minutes: Some(0.5),
        forecast: Some((2, 1)),
        recorded_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
    };
    store.record_canary_result(&result).await.unwrap();
    // Scoring again replaces the row.
    store.record_canary_result(&result).await.unwrap();
    assert_eq!(store.canary_results(r2.id).await.unwrap(), vec![result]);
    assert!(store.unscored_canaries(since, 10).await.unwrap().is_empty());
    assert!(store.canary_results(r1.id).await.unwrap().is_empty());

    let at = chrono::DateTime::from_timestamp(1_800_000_100, 0).unwrap();
    assert_eq!(
        store.runner(r2.id).await.unwrap().unwrap().audit_since,
        None
    );
    store.reset_runner_audit(r2.id, at).await.unwrap();
    assert_eq!(
        store.runner(r2.id).await.unwrap().unwrap().audit_since,
        Some(at)
    );
    assert!(matches!(
        store.reset_runner_audit(RunnerId(999_999), at).await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn forecasts_are_kept_once_and_settled_by_the_verdict(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, Some(3), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let at = |s: i64| chrono::DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
    let forecast = |at_rounds: i64, needed: i64| Forecast {
        comparison_id: c.id,
        runner_id: r1.id,
        benchmark: "parse".into(),
        metric: "time".into(),
        at_rounds,
        needed,
        made_at: at(at_rounds),
        decided_rounds: None,
        decided_at: None,
    };
    store
        .record_forecasts(&[forecast(10, 12), forecast(20, 4)])
        .await
        .unwrap();
    // A re-analysis at 10 rounds that says otherwise does not rewrite what was said.
    store.record_forecasts(&[forecast(10, 30)]).await.unwrap();
    let decided = Forecast {
        decided_rounds: Some(25),
        decided_at: Some(at(25)),
        ..forecast(25, 0)
    };
    assert_eq!(
        store
            .settle_forecasts(std::slice::from_ref(&decided))
            .await
            .unwrap(),
        2
    );
    assert_eq!(store.settle_forecasts(&[decided]).await.unwrap(), 0);
    let kept = store.runner_forecasts(r1.id).await.unwrap();
    let seen: Vec<(i64, i64, Option<i64>)> = kept
        .iter()
        .map(|f| (f.at_rounds, f.needed, f.decided_rounds))
        .collect();
    assert_eq!(seen, [(10, 12, Some(25)), (20, 4, Some(25))]);
    assert_eq!(kept[0].decided_at, Some(at(25)));
}
