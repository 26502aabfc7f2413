//! Webhook deliveries: de-duplicated, recorded atomically with what they ask for.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

fn delivery(id: &str) -> Delivery {
    Delivery {
        delivery_id: id.into(),
        event: "pull_request".into(),
        action: Some("opened".into()),
        outcome: "enqueued".into(),
    }
}

pub async fn redelivery_does_nothing_twice(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let mut new = comparison(&repo, Some(7), "h1", "x", jobs(2, 3));
    new.notify.push(NewOutboxMessage {
        kind: "check_run.create".into(),
        dedupe_key: None,
        payload: serde_json::json!({"head_sha": "h1"}),
    });
    let effects = vec![
        DeliveryEffect::UpsertInstallation(Installation {
            id: 42,
            account_login: "acme".into(),
        }),
        DeliveryEffect::CreateComparison(new),
        DeliveryEffect::Outbox(NewOutboxMessage {
            kind: "reaction.add".into(),
            dedupe_key: Some("reaction:1".into()),
            payload: serde_json::json!({"content": "eyes"}),
        }),
    ];
    let first = store
        .record_delivery(&delivery("d-1"), &effects)
        .await
        .unwrap();
    let DeliveryRecord::Recorded {
        comparisons,
        jobs,
        outbox,
        cancelled_jobs,
    } = first
    else {
        panic!("first delivery recorded: {first:?}");
    };
    assert_eq!(
        (comparisons.len(), jobs.len(), outbox.len(), cancelled_jobs),
        (1, 2, 1, 0)
    );
    let again = store
        .record_delivery(&delivery("d-1"), &effects)
        .await
        .unwrap();
    assert_eq!(again, DeliveryRecord::Duplicate);
    assert_eq!(
        store
            .pull_request_comparisons(repo.id, 7)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(store.queue_depth().await.unwrap().queued, 2);
    assert_eq!(store.outbox_backlog().await.unwrap(), 2);
    let rows = store.claim_outbox(10, LEASE).await.unwrap();
    let check = rows.iter().find(|m| m.kind == "check_run.create").unwrap();
    assert_eq!(
        check.payload["comparison_id"], comparisons[0].0,
        "the new id is in the payload"
    );

    let close = vec![DeliveryEffect::CancelPullRequest {
        repository_id: repo.id,
        pr_number: 7,
    }];
    let closed = store
        .record_delivery(&delivery("d-2"), &close)
        .await
        .unwrap();
    assert!(
        matches!(
            closed,
            DeliveryRecord::Recorded {
                cancelled_jobs: 2,
                ..
            }
        ),
        "{closed:?}"
    );
}

pub async fn failed_delivery_records_nothing(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let effects = vec![
        DeliveryEffect::CreateComparison(comparison(&repo, Some(7), "h1", "x", jobs(1, 3))),
        DeliveryEffect::AddRounds {
            comparison_id: ComparisonId(9999),
            jobs: jobs(1, 3),
        },
    ];
    let failed = store.record_delivery(&delivery("d-1"), &effects).await;
    assert!(matches!(failed, Err(StoreError::NotFound(_))), "{failed:?}");
    assert!(
        store
            .pull_request_comparisons(repo.id, 7)
            .await
            .unwrap()
            .is_empty()
    );
    // Nothing was recorded, so GitHub's redelivery is processed in full.
    let retried = store
        .record_delivery(&delivery("d-1"), &effects[..1])
        .await
        .unwrap();
    assert!(matches!(retried, DeliveryRecord::Recorded { .. }));
}
