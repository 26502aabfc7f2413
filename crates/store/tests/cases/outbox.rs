//! The outbox: leases, backoff, payload replacement.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

fn message(kind: &str, key: Option<&str>, body: &str) -> NewOutboxMessage {
    NewOutboxMessage {
        kind: kind.into(),
        dedupe_key: key.map(Into::into),
        payload: serde_json::json!({ "body": body }),
        priority: Priority::NORMAL,
    }
}

pub async fn outbox_rows_are_claimed_by_priority_then_in_order(store: Arc<dyn Store>) {
    let history = NewOutboxMessage {
        priority: Priority::HISTORY,
        ..message("main.report", None, "h")
    };
    let old_history = store.enqueue_outbox(&history).await.unwrap();
    let pr = store
        .enqueue_outbox(&message("report.check", None, "p"))
        .await
        .unwrap();
    let reaction = NewOutboxMessage {
        priority: Priority::INTERACTIVE,
        ..message("reaction.add", None, "r")
    };
    let reaction = store.enqueue_outbox(&reaction).await.unwrap();
    let claimed = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(
        claimed.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![reaction, pr, old_history],
        "higher priority first, whatever was enqueued first"
    );
    let claimed = store.claim_outbox(10, LEASE).await.unwrap();
    assert!(claimed.is_empty());
    // One at a time, the order holds too (a worker claims in batches of any size).
    let a = store.enqueue_outbox(&history).await.unwrap();
    let b = store
        .enqueue_outbox(&message("report.check", Some("k"), "p"))
        .await
        .unwrap();
    let first = store.claim_outbox(1, LEASE).await.unwrap();
    assert_eq!(
        first.iter().map(|m| (m.id, m.priority)).collect::<Vec<_>>(),
        vec![(b, Priority::NORMAL)]
    );
    assert_ne!(a, b);
}

pub async fn outbox_claims_leases_and_backs_off(store: Arc<dyn Store>) {
    let a = store
        .enqueue_outbox(&message("comment.upsert", None, "a"))
        .await
        .unwrap();
    let b = store
        .enqueue_outbox(&message("check_run.update", None, "b"))
        .await
        .unwrap();
    assert_eq!(store.outbox_backlog().await.unwrap(), 2);

    let claimed = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(claimed.iter().map(|m| m.id).collect::<Vec<_>>(), vec![a, b]);
    assert!(
        store.claim_outbox(10, LEASE).await.unwrap().is_empty(),
        "leased rows are skipped"
    );

    let later = chrono::Utc::now() + chrono::TimeDelta::hours(1);
    let past = chrono::Utc::now() - chrono::TimeDelta::seconds(1);
    store
        .outbox_failed(a, &claimed[0].lease, "502 from GitHub", Some(later))
        .await
        .unwrap();
    store
        .outbox_failed(b, &claimed[1].lease, "429 rate limited", Some(past))
        .await
        .unwrap();
    let due = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(due.len(), 1, "a is backing off");
    assert_eq!((due[0].id, due[0].attempts), (b, 1));
    assert_eq!(due[0].last_error.as_deref(), Some("429 rate limited"));

    let stale = store.outbox_delivered(b, &claimed[1].lease).await;
    assert!(matches!(stale, Err(StoreError::LeaseLost)), "{stale:?}");
    store.outbox_delivered(b, &due[0].lease).await.unwrap();
    assert_eq!(store.outbox_backlog().await.unwrap(), 1);

    // A lease that expired lets another worker take the row.
    let c = store
        .enqueue_outbox(&message("reaction.add", None, "c"))
        .await
        .unwrap();
    let short = store
        .claim_outbox(10, std::time::Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(short[0].id, c);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let retaken = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(retaken[0].id, c);
    store
        .outbox_failed(c, &retaken[0].lease, "422 forever", None)
        .await
        .unwrap();
    assert_eq!(
        store.outbox_backlog().await.unwrap(),
        1,
        "given up rows leave the backlog"
    );
}

pub async fn outbox_replaced_payload_is_sent_again(store: Arc<dyn Store>) {
    let key = Some("comment:acme/widgets#7:x");
    let id = store
        .enqueue_outbox(&message("comment.upsert", key, "v1"))
        .await
        .unwrap();
    let claimed = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(claimed[0].payload["body"], "v1");
    let same = store
        .enqueue_outbox(&message("comment.upsert", key, "v2"))
        .await
        .unwrap();
    assert_eq!(same, id, "a pending row with the key takes the new payload");
    store.outbox_delivered(id, &claimed[0].lease).await.unwrap();
    let resend = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(resend.len(), 1, "v2 arrived while v1 was being sent");
    assert_eq!(resend[0].payload["body"], "v2");
    store.outbox_delivered(id, &resend[0].lease).await.unwrap();
    assert_eq!(store.outbox_backlog().await.unwrap(), 0);
    let fresh = store
        .enqueue_outbox(&message("comment.upsert", key, "v3"))
        .await
        .unwrap();
    assert_ne!(
        fresh, id,
        "a delivered row is history; the key starts a new row"
    );
}

/// A PR's schedule and cancel rows share a key: a close replaces a pending schedule (kind and
/// payload), and one that fails while a newer payload waits is retried with the newer one.
pub async fn outbox_replacement_takes_the_new_kind_and_outlives_a_failure(store: Arc<dyn Store>) {
    let key = Some("pr:acme/widgets#7");
    let id = store
        .enqueue_outbox(&message("pr.schedule", key, "push a"))
        .await
        .unwrap();
    let claimed = store.claim_outbox(10, LEASE).await.unwrap();
    store
        .enqueue_outbox(&message("pr.schedule", key, "push b"))
        .await
        .unwrap();
    let retry_at = chrono::Utc::now() - chrono::TimeDelta::seconds(1);
    store
        .outbox_failed(id, &claimed[0].lease, "503", Some(retry_at))
        .await
        .unwrap();
    let retried = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(retried.len(), 1);
    assert_eq!(
        retried[0].payload["body"], "push b",
        "the newer push is retried"
    );
    store
        .enqueue_outbox(&message("pr.cancel", key, "closed"))
        .await
        .unwrap();
    store
        .outbox_failed(id, &retried[0].lease, "503", None)
        .await
        .unwrap();
    let after = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(after.len(), 1, "giving up on push b still runs the close");
    assert_eq!((after[0].id, after[0].kind.as_str()), (id, "pr.cancel"));
    assert_eq!(after[0].payload["body"], "closed");
}

pub async fn outbox_release_gives_unsent_rows_back_at_once(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for body in ["a", "b", "c"] {
        ids.push(
            store
                .enqueue_outbox(&message("reaction.add", None, body))
                .await
                .unwrap(),
        );
    }
    let claimed = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 3);
    let lease = &claimed[0].lease;
    assert!(
        claimed.iter().all(|m| &m.lease == lease),
        "one lease a claim"
    );
    store.outbox_delivered(ids[0], lease).await.unwrap();

    // The worker stops after the first row: the other two go back, the sent one stays sent.
    assert_eq!(store.release_outbox(&ids, lease).await.unwrap(), 2);
    let again = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(
        again.iter().map(|m| m.id).collect::<Vec<_>>(),
        ids[1..].to_vec(),
        "released rows are due at once, long before the lease would expire"
    );
    assert!(
        again.iter().all(|m| m.attempts == 0),
        "a release uses up no attempt"
    );
    assert_eq!(store.outbox_backlog().await.unwrap(), 2);

    // The old lease no longer holds them: releasing with it is a no-op and the new holder
    // still reports delivery.
    assert_eq!(store.release_outbox(&ids, lease).await.unwrap(), 0);
    for row in &again {
        store.outbox_delivered(row.id, &row.lease).await.unwrap();
    }
    assert_eq!(store.outbox_backlog().await.unwrap(), 0);
    assert_eq!(store.release_outbox(&[], lease).await.unwrap(), 0);
}
