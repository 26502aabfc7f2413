//! What the GitHub side needs to be right under retries and replicas: a PR's newest head
//! (a late schedule of an older push cannot win) and check-run generations (a completed run
//! is final; rounds added after it are reported on a new run).

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

async fn push(store: &Arc<dyn Store>, delivery: &str, pr: i64, head: &str) {
    let effects = vec![DeliveryEffect::RecordPullRequestHead {
        full_name: "acme/widgets".into(),
        pr_number: pr,
        head_sha: head.into(),
    }];
    let d = Delivery {
        delivery_id: delivery.into(),
        event: "pull_request".into(),
        action: Some("synchronize".into()),
        outcome: "scheduled".into(),
    };
    store.record_delivery(&d, &effects).await.unwrap();
}

pub async fn a_stale_head_cannot_supersede_the_newest(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    push(&store, "d-1", 7, "h1").await;
    let first = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    push(&store, "d-2", 7, "h2").await;
    let newest = store.pull_request_head(repo.id, 7).await.unwrap().unwrap();
    assert_eq!(newest.head_sha, "h2");

    let newer = store
        .create_comparison(&comparison(&repo, Some(7), "h2", "x", jobs(1, 3)))
        .await
        .unwrap();
    assert_eq!(newer.superseded, vec![first.id]);
    // The schedule of h1 carried out again after its lease ran out must not undo that.
    let late = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await;
    match late {
        Err(StoreError::StaleHead { head, newest }) => {
            assert_eq!((head.as_str(), newest.as_str()), ("h1", "h2"))
        }
        other => panic!("expected StaleHead, got {other:?}"),
    }
    let kept = store.comparison(newer.id).await.unwrap().unwrap();
    assert_eq!(kept.state, ComparisonState::Queued);
    // Another PR, and comparisons without a recorded head, are not affected.
    store
        .create_comparison(&comparison(&repo, Some(8), "h9", "x", jobs(1, 3)))
        .await
        .unwrap();
    assert!(store.pull_request_head(repo.id, 8).await.unwrap().is_none());
}

pub async fn check_runs_follow_rounds_generations(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let fresh = store.comparison(c.id).await.unwrap().unwrap();
    assert_eq!(
        (
            fresh.check_run_id,
            fresh.rounds_generation,
            fresh.check_run_completed
        ),
        (None, 0, false)
    );
    let first = CheckRunRecord {
        check_run_id: 123456789012,
        generation: 0,
        completed: true,
    };
    store.record_check_run(c.id, first).await.unwrap();
    // Reporting is not progress: the report watcher would re-report forever if it were.
    let reported = store.comparison(c.id).await.unwrap().unwrap();
    assert_eq!(reported.updated_at, fresh.updated_at);

    let more = vec![NewJob {
        rounds: 4,
        priority: Priority::INTERACTIVE,
        max_attempts: 3,
        origin: Some("outbox:9:comparison:1".into()),
    }];
    store.add_rounds(c.id, &more).await.unwrap();
    // Carried out twice, the same request bumps the generation once.
    store.add_rounds(c.id, &more).await.unwrap();
    let after = store.comparison(c.id).await.unwrap().unwrap();
    assert_eq!(after.rounds_generation, 1);
    assert_eq!(after.check_run_id, Some(123456789012));
    assert!(after.check_run_completed);

    let second = CheckRunRecord {
        check_run_id: 555,
        generation: 1,
        completed: false,
    };
    store.record_check_run(c.id, second).await.unwrap();
    // A slow writer of generation 0 finishing late leaves the newer run in place.
    store.record_check_run(c.id, first).await.unwrap();
    let now = store.comparison(c.id).await.unwrap().unwrap();
    assert_eq!(
        (
            now.check_run_id,
            now.check_run_generation,
            now.check_run_completed
        ),
        (Some(555), 1, false)
    );
    let missing = store.record_check_run(ComparisonId(999_999), second).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );

    let of_head = store.head_comparisons(repo.id, "h1").await.unwrap();
    assert_eq!(of_head.iter().map(|c| c.id).collect::<Vec<_>>(), vec![c.id]);
    assert!(
        store
            .head_comparisons(repo.id, "h2")
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn acceptances_are_kept_revoked_and_listed(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let new = |by: &str, reason: &str| NewAcceptance {
        repository_id: repo.id,
        pr_number: 7,
        head_sha: "h1".into(),
        accepted_by: by.into(),
        reason: reason.into(),
        rows: vec![acceptance_row("parse", "time")],
    };
    assert!(
        store
            .active_acceptance(repo.id, "h1")
            .await
            .unwrap()
            .is_none()
    );
    let first = store
        .accept(&new("alice", "expected: safer parser"))
        .await
        .unwrap();
    assert_eq!(first.rows, vec!["parse time".to_owned()]);
    assert_eq!(first.repository, "acme/widgets");
    // A second acceptance of the same head replaces the first, which stays in the trail.
    let second = store.accept(&new("bob", "still expected")).await.unwrap();
    let active = store
        .active_acceptance(repo.id, "h1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(active.id, second.id);
    assert!(
        store
            .active_acceptance(repo.id, "h2")
            .await
            .unwrap()
            .is_none()
    );

    assert_eq!(
        store
            .revoke_acceptance(repo.id, "h1", "carol")
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .revoke_acceptance(repo.id, "h1", "carol")
            .await
            .unwrap(),
        0
    );
    assert!(
        store
            .active_acceptance(repo.id, "h1")
            .await
            .unwrap()
            .is_none()
    );
    let trail = store.acceptances(100).await.unwrap();
    assert_eq!(trail.len(), 2);
    assert_eq!(trail[0].id, second.id, "newest first");
    assert_eq!(trail[0].revoked_by.as_deref(), Some("carol"));
    assert_eq!(trail[1].revoked_by.as_deref(), Some("bob"));
    assert!(trail.iter().all(|a| a.revoked_at.is_some()));
}

/// A PR's description and `/benchgate claim` comments are edited into the stored context; an
/// edit that changes nothing (a retried command, the same text) reports nothing to do.
pub async fn a_pr_context_takes_description_edits_and_comment_claims(store: Arc<dyn Store>) {
    use benchgate_api::agent::{CommentClaim, PullRequestContext};
    let repo = repo(&store, "acme/widgets").await;
    let mut new = comparison(&repo, Some(7), "h1", "x", jobs(1, 3));
    new.config.github = Some(PullRequestContext {
        body: "parse is 20% faster".into(),
        ..Default::default()
    });
    let id = store.create_comparison(&new).await.unwrap().id;
    let claim = |id: u64, bench: &str, change: &str| {
        PullRequestEdit::Claim(CommentClaim {
            line: format!("/benchgate claim {bench} {change}"),
            benchmark: bench.into(),
            by: "octocat".into(),
            comment_id: id,
        })
    };

    let edited = store
        .edit_pull_request_context(
            id,
            &PullRequestEdit::Description("parse is 5% faster".into()),
        )
        .await
        .unwrap()
        .expect("the description changed");
    assert_eq!(edited.body, "parse is 5% faster");
    let same = PullRequestEdit::Description("parse is 5% faster".into());
    assert_eq!(
        store.edit_pull_request_context(id, &same).await.unwrap(),
        None
    );

    store
        .edit_pull_request_context(id, &claim(1, "parse", "-20%"))
        .await
        .unwrap()
        .unwrap();
    store
        .edit_pull_request_context(id, &claim(2, "emit", "-5%"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .edit_pull_request_context(id, &claim(1, "parse", "-20%"))
            .await
            .unwrap(),
        None,
        "a retried command adds nothing"
    );
    // A newer claim on the same benchmark replaces the older one.
    let after = store
        .edit_pull_request_context(id, &claim(3, "parse", "+10%"))
        .await
        .unwrap()
        .unwrap();
    let lines: Vec<&str> = after.claimed.iter().map(|c| c.line.as_str()).collect();
    assert_eq!(
        lines,
        ["/benchgate claim emit -5%", "/benchgate claim parse +10%"]
    );
    let stored = store.comparison(id).await.unwrap().unwrap();
    assert_eq!(
        stored.config.github,
        Some(after),
        "what was returned is what is stored"
    );
    assert_eq!(
        stored.config.benchmark.run, "./bench",
        "the rest of the config stays"
    );

    // A comparison without a PR context has nothing to edit; an unknown one is an error.
    let admin = store
        .create_comparison(&comparison(&repo, None, "h2", "x", jobs(1, 3)))
        .await
        .unwrap()
        .id;
    assert_eq!(
        store.edit_pull_request_context(admin, &same).await.unwrap(),
        None
    );
    assert!(matches!(
        store
            .edit_pull_request_context(ComparisonId(999_999), &same)
            .await,
        Err(StoreError::NotFound(_))
    ));
}
