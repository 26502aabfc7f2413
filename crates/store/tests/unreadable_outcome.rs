//! A culprit search's stored outcome is read as its type or not at all: a row a newer or
//! broken writer left in another shape is an error naming the column and what it could not
//! read, never a search read as "no outcome yet". These tests write the row themselves, on
//! SQLite and on Postgres.

use crate::support::{self, TestDb, repo};
use benchgate_store::*;
use sqlx::Connection as _;

#[tokio::test]
async fn an_unreadable_outcome_is_an_error_on_sqlite() {
    an_unreadable_outcome_is_an_error(support::sqlite().await).await;
}

#[tokio::test]
async fn an_unreadable_outcome_is_an_error_on_postgres() {
    let Some(db) = support::postgres().await else {
        return;
    };
    an_unreadable_outcome_is_an_error(db).await;
}

async fn set_outcome(url: &str, id: i64, json: &str) {
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query("UPDATE bisections SET outcome = $1, state = 'done' WHERE id = $2")
            .bind(json)
            .bind(id)
            .execute(&mut conn)
            .await
            .unwrap();
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query(
            "UPDATE bisections SET outcome = CAST($1 AS JSONB), state = 'done' WHERE id = $2",
        )
        .bind(json)
        .bind(id)
        .execute(&mut conn)
        .await
        .unwrap();
    }
}

async fn an_unreadable_outcome_is_an_error(db: TestDb) {
    let repo = repo(&db.store, "acme/widgets").await;
    let new = NewBisection {
        series: MainSeries {
            repository_id: repo.id,
            branch: "main".into(),
            runner_label: "x".into(),
            suite: String::new(),
        },
        benchmark: "parse".into(),
        metric: "wall_time".into(),
        regression_id: None,
        source_comparison: None,
        good_sha: "c0".into(),
        bad_sha: "c5".into(),
        requested_by: None,
    };
    let (search, _) = db.store.create_bisection(&new).await.unwrap();
    set_outcome(
        &db.url,
        search.id,
        r#"{"kind": "culprit_maybe", "probes": 3}"#,
    )
    .await;
    let read = db.store.bisection(search.id).await;
    let err = read
        .expect_err("an unreadable outcome is an error")
        .to_string();
    assert!(
        err.contains("\"outcome\"") && err.contains("culprit_maybe"),
        "{err}"
    );
}
