//! Fresh databases for each test, and small builders for test data.

use benchgate_api::{Measurement, Side};
use benchgate_store::*;
use sqlx::Connection as _;
use std::sync::Arc;

/// A store on a fresh database; dropping it removes the database.
pub struct TestDb {
    pub store: Arc<dyn Store>,
    /// The database's URL, for tests that look at rows the store does not return.
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    postgres: Option<(String, String)>,
}

/// A migrated store on a new SQLite file in a temporary directory.
pub async fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("store.db").display());
    let store = connect(&url).await.expect("open sqlite");
    store.migrate().await.expect("migrate sqlite");
    TestDb {
        store,
        url,
        _dir: Some(dir),
        postgres: None,
    }
}

/// A migrated store on a new Postgres database, or `None` (with the reason printed) when
/// `BENCHGATE_TEST_POSTGRES_URL` is not set. In CI a missing URL fails the test.
pub async fn postgres() -> Option<TestDb> {
    let admin = match std::env::var("BENCHGATE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "BENCHGATE_TEST_POSTGRES_URL is not set but CI is: the Postgres half of the \
                     store contract must run in CI (e.g. postgres://postgres@127.0.0.1:5432/test)"
                );
            }
            eprintln!(
                "SKIPPED on Postgres: BENCHGATE_TEST_POSTGRES_URL is not set \
                 (e.g. postgres://postgres@127.0.0.1:5432/test)"
            );
            return None;
        }
    };
    let name = format!("benchgate_test_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("cannot reach {}: {e}", mask_url(&admin)));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await
        .expect("create test database");
    conn.close().await.ok();
    let url = with_database(&admin, &name);
    let db = TestDb {
        store: connect(&url).await.expect("open postgres"),
        url,
        _dir: None,
        postgres: Some((admin, name)),
    };
    db.store.migrate().await.expect("migrate postgres");
    Some(db)
}

/// `url` pointing at database `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let host_start = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[host_start..]
        .find('/')
        .map_or(base.len(), |i| host_start + i);
    format!("{}/{name}{query}", &base[..host_end])
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((admin, name)) = self.postgres.take() else {
            return;
        };
        // Drop runs outside async (and also after a panic), so use a runtime of its own.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                    let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                    let _ = sqlx::query(sqlx::AssertSqlSafe(sql))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join()
        .ok();
    }
}

/// Labels as the store takes them.
pub fn labels(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// A repository given by name.
pub async fn repo(store: &Arc<dyn Store>, name: &str) -> Repository {
    store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: None,
            full_name: name.into(),
            clone_url: format!("https://example.invalid/{name}.git"),
            forge: Default::default(),
        })
        .await
        .expect("upsert repository")
}

/// A runner with labels.
pub async fn runner(store: &Arc<dyn Store>, name: &str, with: &[&str]) -> NewRunner {
    store
        .add_runner(name, &labels(with))
        .await
        .expect("add runner")
}

/// A comparison of one job on `acme/widgets`, claimed by a new runner `r1` (label `x`).
pub async fn one_claimed_job(store: &Arc<dyn Store>) -> (CreatedComparison, ClaimedJob) {
    let repo = repo(store, "acme/widgets").await;
    let r1 = runner(store, "r1", &["x"]).await.runner;
    let created = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    (created, claim)
}

/// A `pull_request` delivery with id `id`.
pub fn delivery(id: &str, outcome: &str) -> Delivery {
    Delivery {
        delivery_id: id.into(),
        event: "pull_request".into(),
        action: Some("opened".into()),
        outcome: outcome.into(),
    }
}

/// `n` normal-priority jobs of `rounds` rounds.
pub fn jobs(n: usize, max_attempts: i64) -> Vec<NewJob> {
    let job = NewJob {
        max_attempts,
        ..NewJob::rounds(10)
    };
    vec![job; n]
}

/// A comparison on label `label` for `pr` (None: no PR) with the given jobs.
pub fn comparison(
    repo: &Repository,
    pr: Option<i64>,
    head: &str,
    label: &str,
    jobs: Vec<NewJob>,
) -> NewComparison {
    let mut c = NewComparison::new(repo.id, "b".repeat(40), head, label, config())
        .pr(pr)
        .planned(20);
    c.jobs = jobs;
    c
}

/// A comparison's config as the scheduler stores it: a criterion suite run by `./bench`.
pub fn config() -> benchgate_api::agent::StoredComparisonConfig {
    serde_json::from_value(
        serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
    )
    .expect("a minimal config parses")
}

/// One round of base and head values for one benchmark.
pub fn round(round: i64, base: f64, head: f64) -> RoundUpload {
    let m = |value| Measurement {
        benchmark: "parse".into(),
        metric: "time".into(),
        unit: "ns".into(),
        value,
        lower: None,
        upper: None,
        direction: Default::default(),
        run: None,
    };
    RoundUpload {
        round,
        samples: vec![
            SampleInput {
                side: Side::Base,
                position: round % 2,
                measurement: m(base),
            },
            SampleInput {
                side: Side::Head,
                position: 1 - round % 2,
                measurement: m(head),
            },
        ],
    }
}

/// Far enough ahead that every lease has expired.
pub fn much_later() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::TimeDelta::hours(1)
}

/// A one-minute lease.
pub const LEASE: std::time::Duration = std::time::Duration::from_secs(60);
