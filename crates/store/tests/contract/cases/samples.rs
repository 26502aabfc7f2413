//! Samples stay with the machine that produced them.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

pub async fn samples_stay_with_their_runner(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let x = labels(&["x"]);
    let first = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    for k in 0..2 {
        store
            .upload_round(first.job.id, &first.lease, &round(k, 100.0, 110.0))
            .await
            .unwrap();
    }
    // r1 dies; its lease expires and r2 takes the job over, starting its own series.
    store.reap_expired_leases(much_later()).await.unwrap();
    let second = store.claim_job(r2.id, &x, LEASE).await.unwrap().unwrap();
    for k in 0..3 {
        store
            .upload_round(second.job.id, &second.lease, &round(k, 200.0, 190.0))
            .await
            .unwrap();
    }
    let series = store.comparison_samples(c.id).await.unwrap();
    assert_eq!(series.len(), 2, "one series per runner");
    let by = |id| series.iter().find(|s| s.runner_id == id).unwrap();
    let (s1, s2) = (by(r1.id), by(r2.id));
    assert_eq!((s1.runner_name.as_str(), s1.samples.len()), ("r1", 4));
    assert_eq!((s2.runner_name.as_str(), s2.samples.len()), ("r2", 6));
    assert!(
        s1.samples
            .iter()
            .all(|s| s.runner_id == r1.id && s.attempt == 1 && s.value < 150.0)
    );
    assert!(
        s2.samples
            .iter()
            .all(|s| s.runner_id == r2.id && s.attempt == 2 && s.value > 150.0)
    );
    let rounds: Vec<(i64, benchgate_api::Side, i64)> = s2
        .samples
        .iter()
        .map(|s| (s.round, s.side, s.position))
        .collect();
    use benchgate_api::Side::{Base, Head};
    assert_eq!(
        rounds,
        vec![
            (0, Base, 0),
            (0, Head, 1),
            (1, Head, 0),
            (1, Base, 1),
            (2, Base, 0),
            (2, Head, 1)
        ],
        "ordered by round, then position (ABBA)"
    );
    assert_eq!(s2.samples[0].benchmark, "parse");
    assert_eq!(s2.samples[0].unit, "ns");
}
