//! Opening a store from a URL: bad URLs are clear errors, never panics or leaked passwords.

use benchgate_store::{StoreError, connect};

async fn connect_error(url: &str) -> (String, String) {
    match connect(url).await {
        Err(StoreError::Connect { url, reason }) => (url, reason),
        Err(other) => panic!("{url}: expected a Connect error, got {other}"),
        Ok(_) => panic!("{url}: expected a Connect error, got a store"),
    }
}

#[tokio::test]
async fn unsupported_schemes_are_rejected() {
    let (url, reason) = connect_error("mysql://root:hunter2@localhost/db").await;
    assert_eq!(url, "mysql://root:***@localhost/db");
    assert!(
        reason.contains("sqlite://") && reason.contains("postgres://"),
        "{reason}"
    );
    let (url, _) = connect_error("benchgate.db").await;
    assert_eq!(url, "benchgate.db");
}

#[tokio::test]
async fn unreachable_postgres_names_the_masked_url() {
    // Port 1 on localhost: nothing listens there.
    let (url, reason) = connect_error("postgres://bench:hunter2@127.0.0.1:1/benchgate").await;
    assert_eq!(url, "postgres://bench:***@127.0.0.1:1/benchgate");
    assert!(!reason.contains("hunter2"), "{reason}");
    let err = connect("postgres://bench:hunter2@127.0.0.1:1/benchgate")
        .await
        .err()
        .unwrap();
    let line = err.to_string();
    assert!(
        line.starts_with("cannot open database postgres://bench:***@"),
        "{line}"
    );
    assert!(!line.contains("hunter2"), "{line}");
}

#[tokio::test]
async fn malformed_postgres_url_is_an_error() {
    let (url, reason) = connect_error("postgres://bench:hunter2@127.0.0.1:notaport/db").await;
    assert_eq!(url, "postgres://bench:***@127.0.0.1:notaport/db");
    assert!(!reason.contains("hunter2"), "{reason}");
}

#[tokio::test]
async fn sqlite_in_a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/no/such/dir/x.db", dir.path().display());
    let (shown, _) = connect_error(&url).await;
    assert_eq!(shown, url);
}

#[tokio::test]
async fn sqlite_file_is_created_ready_after_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.db");
    let store = connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    assert!(path.exists(), "created if missing");
    let before = store.readiness().await;
    assert!(before.reachable && !before.migrations_current);
    store.migrate().await.unwrap();
    assert!(store.readiness().await.is_ready());
    assert_eq!(store.backend(), "sqlite");
}
