//! Postgres ends the store's sessions (a restart, a failover, `pg_terminate_backend`): the
//! pool no longer pings every connection before use, so a delivery recorded on a connection
//! that broke since its last use is recorded again on another, and a connection that sat idle
//! is pinged and replaced. Nothing is lost and nothing is recorded twice.

use crate::support::{self, delivery};
use benchgate_store::*;
use sqlx::Connection as _;

/// Ends every session on `db` but the caller's; returns how many it ended.
async fn end_sessions(url: &str, db: &str) -> i64 {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let ended: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = $1 AND pid <> pg_backend_pid()",
    )
    .bind(db)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    ended.iter().filter(|(ok,)| *ok).count() as i64
}

fn effect(n: i64) -> Vec<DeliveryEffect> {
    vec![DeliveryEffect::UpsertInstallation(Installation {
        id: n,
        account_login: format!("acct-{n}"),
    })]
}

#[tokio::test]
async fn deliveries_survive_sessions_ended_by_the_server() {
    let Some(db) = support::postgres().await else {
        return;
    };
    let name = db.url.rsplit('/').next().unwrap().to_owned();
    // Several connections in the pool, all used a moment ago.
    let warm: Vec<_> = (0..4)
        .map(|i| {
            let store = db.store.clone();
            tokio::spawn(async move {
                let d = delivery(&format!("warm-{i}"), "scheduled");
                store.record_delivery(&d, &effect(i)).await.unwrap()
            })
        })
        .collect();
    for w in warm {
        w.await.unwrap();
    }
    assert!(
        end_sessions(&db.url, &name).await >= 1,
        "the pool had sessions to end"
    );

    // Used less than a second ago, so not pinged: the first try fails and is retried.
    let recorded = db
        .store
        .record_delivery(&delivery("after-end", "scheduled"), &effect(10))
        .await
        .expect("recorded on a new connection");
    assert!(
        matches!(recorded, DeliveryRecord::Recorded { .. }),
        "{recorded:?}"
    );
    let again = db
        .store
        .record_delivery(&delivery("after-end", "scheduled"), &effect(10))
        .await
        .unwrap();
    assert_eq!(again, DeliveryRecord::Duplicate, "recorded once");

    // Idle for longer than the ping threshold: pinged, found gone, replaced.
    end_sessions(&db.url, &name).await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    db.store
        .list_runners()
        .await
        .expect("an idle connection that was ended is replaced before use");
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let (n,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM webhook_deliveries WHERE delivery_id = 'after-end'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(n, 1);
}

/// `--database-pool-size`: the store never holds more connections than it was given, however
/// many deliveries arrive at once, and none of them is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_pool_holds_at_most_its_size() {
    let Some(db) = support::postgres().await else {
        return;
    };
    let name = db.url.rsplit('/').next().unwrap().to_owned();
    let store = connect_with_pool(&db.url, 2).await.unwrap();
    let burst: Vec<_> = (0..24)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let d = delivery(&format!("burst-{i}"), "scheduled");
                store.record_delivery(&d, &effect(100 + i)).await.unwrap()
            })
        })
        .collect();
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let mut most = 0;
    for b in burst {
        let (open,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        )
        .bind(&name)
        .fetch_one(&mut conn)
        .await
        .unwrap();
        most = most.max(open);
        assert!(matches!(b.await.unwrap(), DeliveryRecord::Recorded { .. }));
    }
    // 2 of this store, and the one the fixture's own store kept from migrating.
    assert!(most <= 3, "{most} connections open");
    let (n,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM webhook_deliveries WHERE delivery_id LIKE 'burst-%'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(n, 24);
}
