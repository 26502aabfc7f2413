//! A delivery leaves an installation or repository row that already says what it says alone:
//! rewriting it would lock the row until the delivery commits, so every delivery of one
//! repository would wait for the one before. A change is still written. The store does not
//! return `updated_at`, so these tests read the rows themselves, on SQLite and on Postgres.

use crate::support::{self, TestDb};
use benchgate_store::*;
use sqlx::Connection as _;

#[tokio::test]
async fn unchanged_rows_are_left_alone_on_sqlite() {
    unchanged_rows_are_left_alone(support::sqlite().await).await;
}

#[tokio::test]
async fn unchanged_rows_are_left_alone_on_postgres() {
    let Some(db) = support::postgres().await else {
        return;
    };
    unchanged_rows_are_left_alone(db).await;
}

/// The installation's and the repository's columns as text, `updated_at` included.
type Rows = (String, String, String, String, Option<String>);

async fn rows(url: &str) -> Rows {
    const SQL: &str = "SELECT i.account_login, CAST(i.updated_at AS TEXT), r.clone_url, \
        CAST(r.updated_at AS TEXT), CAST(r.removed_at AS TEXT) \
        FROM installations i JOIN repositories r ON r.installation_id = i.id \
        WHERE i.id = 42 AND r.full_name = 'acme/widgets'";
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_as(SQL).fetch_one(&mut conn).await.unwrap()
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_as(SQL).fetch_one(&mut conn).await.unwrap()
    }
}

fn effects(account: &str, clone_url: &str) -> Vec<DeliveryEffect> {
    vec![
        DeliveryEffect::UpsertInstallation(Installation {
            id: 42,
            account_login: account.into(),
        }),
        DeliveryEffect::UpsertRepository(NewRepository {
            github_id: None,
            installation_id: Some(42),
            full_name: "acme/widgets".into(),
            clone_url: clone_url.into(),
            forge: Default::default(),
        }),
    ]
}

async fn deliver(db: &TestDb, id: &str, effects: &[DeliveryEffect]) {
    let delivery = Delivery {
        delivery_id: id.into(),
        event: "pull_request".into(),
        action: Some("opened".into()),
        outcome: "scheduled".into(),
    };
    let got = db.store.record_delivery(&delivery, effects).await.unwrap();
    assert!(matches!(got, DeliveryRecord::Recorded { .. }), "{got:?}");
}

async fn unchanged_rows_are_left_alone(db: TestDb) {
    let url = "https://github.com/acme/widgets.git";
    deliver(&db, "d-1", &effects("acme", url)).await;
    let first = rows(&db.url).await;
    assert_eq!((first.0.as_str(), first.2.as_str()), ("acme", url));

    // Timestamps have microseconds: a rewrite now would change them.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    deliver(&db, "d-2", &effects("acme", url)).await;
    // A repository named without its installation keeps the one it has.
    let mut no_installation = effects("acme", url);
    if let DeliveryEffect::UpsertRepository(r) = &mut no_installation[1] {
        r.installation_id = None;
    }
    deliver(&db, "d-3", &no_installation).await;
    assert_eq!(rows(&db.url).await, first, "unchanged rows were rewritten");
    let repo = db
        .store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: Some(42),
            full_name: "acme/widgets".into(),
            clone_url: url.into(),
            forge: Default::default(),
        })
        .await
        .unwrap();
    assert_eq!(
        (repo.full_name.as_str(), repo.installation_id),
        ("acme/widgets", Some(42))
    );
    assert_eq!(
        rows(&db.url).await,
        first,
        "an unchanged upsert still returns the row"
    );

    let moved = "https://github.com/acme/widgets-moved.git";
    deliver(&db, "d-4", &effects("acme-renamed", moved)).await;
    let changed = rows(&db.url).await;
    assert_eq!(
        (changed.0.as_str(), changed.2.as_str()),
        ("acme-renamed", moved)
    );
    assert_ne!(
        (&changed.1, &changed.3),
        (&first.1, &first.3),
        "a change is written"
    );

    // Uninstalled, then installed again: the same values bring the rows back.
    db.store.remove_installation(42).await.unwrap();
    assert!(rows(&db.url).await.4.is_some());
    deliver(&db, "d-5", &effects("acme-renamed", moved)).await;
    assert_eq!(rows(&db.url).await.4, None);
    let repo = db
        .store
        .repository_by_name("acme/widgets")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(repo.removed_at, None);
}
