//! A comparison's kind is stored in its own column: written when it is created, read back as
//! the type, filtered in the query, and, for rows written before the column existed, filled
//! by the migration from what the comparison carries. On SQLite and on Postgres.

use crate::support::{self, TestDb, config, repo};
use benchgate_api::agent::{
    CanarySpec, LayoutSalts, MergeGroupContext, MergeQueueSettings, PlantedBy, PullRequestContext,
    StoredComparisonConfig,
};
use benchgate_store::*;
use sqlx::Connection as _;

#[tokio::test]
async fn kinds_are_stored_filtered_and_backfilled_on_sqlite() {
    kinds_are_stored_filtered_and_backfilled(support::sqlite().await).await;
}

#[tokio::test]
async fn kinds_are_stored_filtered_and_backfilled_on_postgres() {
    let Some(db) = support::postgres().await else {
        return;
    };
    kinds_are_stored_filtered_and_backfilled(db).await;
}

/// One comparison of each kind, as each scheduler makes it.
fn one_of_each(repository: RepositoryId) -> Vec<(ComparisonKind, NewComparison)> {
    let with = |f: &dyn Fn(&mut StoredComparisonConfig)| {
        let mut c = config();
        f(&mut c);
        c
    };
    let new = |head: &str, c: StoredComparisonConfig| {
        NewComparison::new(repository, "b".repeat(40), head.repeat(40), "x", c)
    };
    let commits = |head: &str| vec![head.repeat(40)];
    vec![
        (
            ComparisonKind::PullRequest,
            new(
                "1",
                with(&|c| c.github = Some(PullRequestContext::default())),
            )
            .pr(7),
        ),
        (
            ComparisonKind::MergeGroup,
            new(
                "2",
                with(&|c| {
                    c.merge_group = Some(MergeGroupContext {
                        head_ref: "gh-readonly-queue/main/pr-7-1111".into(),
                        base_ref: "main".into(),
                        settings: MergeQueueSettings::default(),
                        prs: Vec::new(),
                        step_of: None,
                        alpha_split: None,
                    })
                }),
            ),
        ),
        (
            ComparisonKind::MainStep,
            new("3", config()).main(MainKind::Step, "main", commits("3")),
        ),
        (
            ComparisonKind::MainAnchor,
            new("4", config()).main(MainKind::Anchor, "main", commits("4")),
        ),
        (
            ComparisonKind::Canary,
            new(
                "5",
                with(&|c| {
                    c.canary = Some(CanarySpec {
                        runner_id: 1,
                        planted_pct: Some(5.0),
                        planted_by: PlantedBy::default(),
                    })
                }),
            ),
        ),
        (
            ComparisonKind::LayoutSession,
            new(
                "6",
                with(&|c| {
                    c.layout = Some(LayoutSalts {
                        base: "s1".into(),
                        head: "s2".into(),
                    })
                }),
            ),
        ),
        (ComparisonKind::Plain, new("7", config())),
    ]
}

async fn kinds_are_stored_filtered_and_backfilled(db: TestDb) {
    let store = &db.store;
    let repo = repo(store, "acme/widgets").await;
    // The canary's runner must exist: its jobs are pinned to it.
    support::runner(store, "quiet-1", &["x"]).await;
    let made = one_of_each(repo.id);
    let mut ids = Vec::new();
    for (kind, new) in &made {
        assert_eq!(new.kind(), *kind);
        ids.push((*kind, store.create_comparison(new).await.unwrap().id));
    }
    let read_kinds = async || {
        let mut kinds = Vec::new();
        for (_, id) in &ids {
            kinds.push(store.comparison(*id).await.unwrap().unwrap().kind());
        }
        kinds
    };
    let expected: Vec<ComparisonKind> = ids.iter().map(|(k, _)| *k).collect();
    assert_eq!(read_kinds().await, expected);

    // The filter runs in the query: a limit counts only the kinds asked for.
    let only = |kinds: &[ComparisonKind]| ComparisonFilter {
        kinds: kinds.to_vec(),
        ..ComparisonFilter::default()
    };
    let found = store
        .find_comparisons(
            &only(&[ComparisonKind::MainStep, ComparisonKind::Canary]),
            2,
        )
        .await
        .unwrap();
    let mut found: Vec<ComparisonKind> = found.iter().map(Comparison::kind).collect();
    found.sort_by_key(|k| k.as_str());
    assert_eq!(found, [ComparisonKind::Canary, ComparisonKind::MainStep]);
    assert_eq!(
        store
            .find_comparisons(&ComparisonFilter::default(), 100)
            .await
            .unwrap()
            .len(),
        made.len()
    );

    // Rows written before the column existed: drop it, forget its migration, migrate again.
    forget_the_kind_column(&db.url).await;
    store.migrate().await.unwrap();
    assert_eq!(
        read_kinds().await,
        expected,
        "the migration fills each row's kind from what it carries"
    );
}

async fn forget_the_kind_column(url: &str) {
    let statements = [
        "DROP INDEX comparisons_kind",
        "ALTER TABLE comparisons DROP COLUMN kind",
        "DELETE FROM _sqlx_migrations WHERE version = 17",
    ];
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        for s in statements {
            sqlx::query(s).execute(&mut conn).await.unwrap();
        }
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        for s in statements {
            sqlx::query(s).execute(&mut conn).await.unwrap();
        }
    }
}
