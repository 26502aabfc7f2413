//! The server crate's integration tests, built as one test binary: each file beside this one is
//! a module. Run one file's tests with `cargo test -p benchgate-server --test integration audit::`.

mod anchor_schedule;
mod audit;
mod lost_writes;
mod runner_modes;
mod strata;

/// A migrated SQLite store in a temp dir with one repository, `acme/widgets`: what every file
/// here starts from, and its database URL. Keep the dir alive as long as the store.
pub async fn sqlite_with_repository() -> (
    std::sync::Arc<dyn benchgate_store::Store>,
    benchgate_store::Repository,
    tempfile::TempDir,
    String,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("server.db").display());
    let store = benchgate_store::connect(&url).await.expect("open sqlite");
    store.migrate().await.expect("migrate");
    let repo = store
        .upsert_repository(&benchgate_store::NewRepository {
            github_id: None,
            installation_id: None,
            full_name: "acme/widgets".into(),
            clone_url: "https://example.invalid/acme/widgets.git".into(),
            forge: benchgate_store::model::Forge::GitHub,
        })
        .await
        .unwrap();
    (store, repo, dir, url)
}
