//! Webhook deliveries: de-duplicated, recorded atomically with what they ask for.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

fn delivery(id: &str) -> Delivery {
    crate::support::delivery(id, "enqueued")
}

pub async fn redelivery_does_nothing_twice(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let mut new = comparison(&repo, Some(7), "h1", "x", jobs(2, 3));
    new.notify.push(NewOutboxMessage {
        kind: "check_run.create".into(),
        dedupe_key: None,
        payload: serde_json::json!({"head_sha": "h1"}),
        priority: Priority::NORMAL,
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
            priority: Priority::NORMAL,
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

/// The usual `pull_request` delivery: its installation, repository, the PR's newest head and
/// its schedule row (Postgres writes them in one statement, SQLite one by one; the rows are
/// the same). A later head replaces the pending schedule; a redelivery writes nothing.
pub async fn a_pull_request_delivery_records_its_rows(store: Arc<dyn Store>) {
    let effects = |repo: &str, github_id: Option<i64>, sha: &str, clone: &str| {
        vec![
            DeliveryEffect::UpsertInstallation(Installation {
                id: 42,
                account_login: "acme".into(),
            }),
            DeliveryEffect::UpsertRepository(NewRepository {
                github_id,
                installation_id: Some(42),
                full_name: repo.into(),
                clone_url: clone.into(),
                forge: Default::default(),
            }),
            DeliveryEffect::RecordPullRequestHead {
                full_name: repo.into(),
                pr_number: 7,
                head_sha: sha.into(),
            },
            DeliveryEffect::Outbox(NewOutboxMessage {
                kind: "pull_request.schedule".into(),
                dedupe_key: Some(format!("schedule:{repo}#7")),
                payload: serde_json::json!({ "head_sha": sha }),
                priority: Priority::NORMAL,
            }),
        ]
    };
    let outbox_of = |record: DeliveryRecord| match record {
        DeliveryRecord::Recorded {
            comparisons,
            jobs,
            cancelled_jobs,
            outbox,
        } => {
            assert!(comparisons.is_empty() && jobs.is_empty() && cancelled_jobs == 0);
            assert_eq!(outbox.len(), 1);
            outbox[0]
        }
        DeliveryRecord::Duplicate => panic!("recorded as a duplicate"),
    };
    let widgets = "https://github.com/acme/widgets.git";
    let first = store
        .record_delivery(
            &delivery("pr-1"),
            &effects("acme/widgets", Some(555), "a1", widgets),
        )
        .await
        .unwrap();
    let first = outbox_of(first);
    let repo = store
        .repository_by_name("acme/widgets")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            repo.github_id,
            repo.installation_id,
            repo.clone_url.as_str()
        ),
        (Some(555), Some(42), widgets)
    );
    let head = store.pull_request_head(repo.id, 7).await.unwrap().unwrap();
    assert_eq!(head.head_sha, "a1");

    let moved = "https://github.com/acme/widgets-moved.git";
    let second = store
        .record_delivery(
            &delivery("pr-2"),
            &effects("acme/widgets", Some(555), "b2", moved),
        )
        .await
        .unwrap();
    assert_eq!(
        outbox_of(second),
        first,
        "the pending schedule takes the newer head"
    );
    let again = store
        .record_delivery(
            &delivery("pr-2"),
            &effects("acme/widgets", Some(555), "c3", widgets),
        )
        .await
        .unwrap();
    assert_eq!(again, DeliveryRecord::Duplicate);
    let repo = store
        .repository_by_name("acme/widgets")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(repo.clone_url, moved, "a redelivery wrote nothing");
    let head = store.pull_request_head(repo.id, 7).await.unwrap().unwrap();
    assert_eq!(head.head_sha, "b2");

    // A repository known by name only.
    let gadgets = store
        .record_delivery(
            &delivery("pr-3"),
            &effects(
                "acme/gadgets",
                None,
                "d4",
                "https://example.invalid/gadgets.git",
            ),
        )
        .await
        .unwrap();
    assert_ne!(outbox_of(gadgets), first);
    let other = store
        .repository_by_name("acme/gadgets")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((other.github_id, other.installation_id), (None, Some(42)));
    let head = store.pull_request_head(other.id, 7).await.unwrap().unwrap();
    assert_eq!(head.head_sha, "d4");

    let mut sent = store
        .claim_outbox(10, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    sent.sort_by_key(|m| m.id);
    let heads: Vec<&serde_json::Value> = sent.iter().map(|m| &m.payload["head_sha"]).collect();
    assert_eq!(heads, ["b2", "d4"]);
}
