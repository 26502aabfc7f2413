//! The default branch's history: steps folded while queued, a finished step judged by an
//! outbox row, regression episodes opened once and closed once.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

fn step(repo: &Repository, base: &str, head: &str, label: &str) -> NewComparison {
    comparison(repo, None, head, label, jobs(1, 3))
        .between(base, head)
        .main(MainKind::Step, "main", vec![head.into()])
}

pub async fn queued_steps_fold_into_the_newest_push(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r = runner(&store, "r1", &["x"]).await.runner;
    let first = store
        .create_comparison(&step(&repo, "c0", "c1", "x"))
        .await
        .unwrap();
    // The runner takes the first step: it runs as it is and is never folded.
    let claim = store
        .claim_job(r.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claim.job.comparison_id, Some(first.id));
    let second = store
        .create_comparison(&step(&repo, "c1", "c2", "x"))
        .await
        .unwrap();
    let third = store
        .create_comparison(&step(&repo, "c2", "c3", "x"))
        .await
        .unwrap();
    // Another label's step and a step that does not continue the chain stay as they are.
    let other_label = store
        .create_comparison(&step(&repo, "c1", "c2", "y"))
        .await
        .unwrap();
    let unrelated = store
        .create_comparison(&step(&repo, "z0", "z1", "x"))
        .await
        .unwrap();
    let fourth = store
        .create_comparison(&step(&repo, "c3", "c4", "x"))
        .await
        .unwrap();
    assert_eq!(
        second.folded,
        Vec::<ComparisonId>::new(),
        "c0→c1 had started"
    );
    assert_eq!(third.folded, vec![second.id]);
    assert_eq!(fourth.folded, vec![third.id]);
    let c = store.comparison(fourth.id).await.unwrap().unwrap();
    assert_eq!(
        c.base_sha, "c1",
        "starts from the oldest folded step's base"
    );
    let main = c.main.unwrap();
    assert_eq!((main.kind, main.branch.as_str()), (MainKind::Step, "main"));
    assert_eq!(
        main.commits,
        ["c2", "c3", "c4"],
        "three commits, oldest first"
    );
    for (id, state) in [
        (first.id, ComparisonState::Running),
        (second.id, ComparisonState::Superseded),
        (third.id, ComparisonState::Superseded),
        (other_label.id, ComparisonState::Queued),
        (unrelated.id, ComparisonState::Queued),
        (fourth.id, ComparisonState::Queued),
    ] {
        assert_eq!(
            store.comparison(id).await.unwrap().unwrap().state,
            state,
            "{id}"
        );
    }
    for job in store.comparison_jobs(second.id).await.unwrap() {
        assert_eq!(job.state, JobState::Cancelled);
    }
    // The folded step's job is gone from the queue: the next claim is the first step's
    // successor on this label, not a folded one.
    store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    let next = store
        .claim_job(r.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(next.job.comparison_id, Some(second.id));
    assert_ne!(next.job.comparison_id, Some(third.id));
    let all = store.main_comparisons(repo.id, "main").await.unwrap();
    assert_eq!(all.len(), 6);
    let series = store.main_series().await.unwrap();
    assert_eq!(series.len(), 2, "one series per label: {series:?}");
}

pub async fn a_finished_step_enqueues_its_judgement(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r = runner(&store, "r1", &["x"]).await.runner;
    let created = store
        .create_comparison(&step(&repo, "c0", "c1", "x"))
        .await
        .unwrap();
    let claim = store
        .claim_job(r.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    let rows = store.claim_outbox(10, LEASE).await.unwrap();
    let report: Vec<_> = rows.iter().filter(|m| m.kind == MAIN_REPORT).collect();
    assert_eq!(report.len(), 1, "{rows:?}");
    assert_eq!(report[0].payload["comparison_id"], created.id.0);
    // No PR, so no check run or comment rows.
    assert!(rows.iter().all(|m| m.kind == MAIN_REPORT), "{rows:?}");
}

pub async fn a_regression_episode_is_opened_once_and_closed_once(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let a = store
        .create_comparison(&step(&repo, "c0", "c1", "x"))
        .await
        .unwrap();
    let b = store
        .create_comparison(&step(&repo, "c1", "c2", "x"))
        .await
        .unwrap();
    let series = MainSeries {
        repository_id: repo.id,
        branch: "main".into(),
        runner_label: "x".into(),
        suite: String::new(),
    };
    let new = |comparison| NewRegression {
        series: series.clone(),
        benchmark: "parse".into(),
        metric: "wall_time".into(),
        kind: RegressionKind::Step,
        comparison,
        base_sha: "c0".into(),
        head_sha: "c1".into(),
        change: 0.3,
        lower: 0.25,
        upper: 0.35,
    };
    let opened = store.open_regression(&new(a.id)).await.unwrap();
    assert!(opened.open);
    assert_eq!((opened.opened_by, opened.last_seen_by), (a.id, a.id));
    // Seen again: the same episode, noted, not a second one.
    let again = store.open_regression(&new(b.id)).await.unwrap();
    assert_eq!(again.id, opened.id);
    assert_eq!((again.opened_by, again.last_seen_by), (a.id, b.id));
    // Another kind is another episode.
    let creep = store
        .open_regression(&NewRegression {
            kind: RegressionKind::Creep,
            ..new(b.id)
        })
        .await
        .unwrap();
    assert_ne!(creep.id, opened.id);
    assert!(store.close_regression(opened.id, b.id).await.unwrap());
    assert!(
        !store.close_regression(opened.id, b.id).await.unwrap(),
        "closed once"
    );
    store.set_regression_issue(opened.id, 17).await.unwrap();
    let closed = store.regression(opened.id).await.unwrap().unwrap();
    assert_eq!(
        (closed.open, closed.closed_by, closed.issue_number),
        (false, Some(b.id), Some(17))
    );
    // A later slowdown of the same benchmark is a new episode.
    let later = store.open_regression(&new(b.id)).await.unwrap();
    assert_ne!(later.id, opened.id);
    assert!(later.open);
    let listed = store.regressions(repo.id).await.unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].id, later.id, "newest first");
}

pub async fn one_active_anchor_comparison_per_pair_of_commits(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let anchor = || {
        step(&repo, "c1", "c3", "x").main(MainKind::Anchor, "main", vec!["c2".into(), "c3".into()])
    };
    let first = store.create_comparison(&anchor()).await.unwrap();
    // A second replica scheduling the same one at once is refused, and nothing is half-written.
    let second = store.create_comparison(&anchor()).await;
    assert!(matches!(second, Err(StoreError::Conflict(_))), "{second:?}");
    assert_eq!(
        store.main_comparisons(repo.id, "main").await.unwrap().len(),
        1
    );
    assert_eq!(store.comparison_jobs(first.id).await.unwrap().len(), 1);
    // Once that one finished, the same commits may be compared again.
    let r = runner(&store, "r1", &["x"]).await.runner;
    let claim = store
        .claim_job(r.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    store.create_comparison(&anchor()).await.unwrap();
}

/// A culprit search: started once per benchmark and range while running (with the row that
/// takes its first step), its probes added once and ended once, and a comparison it waits on
/// wakes it when it ends, in the same transaction.
pub async fn a_culprit_search_is_started_once_and_woken_by_its_comparisons(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r = runner(&store, "r1", &["x"]).await.runner;
    let series = MainSeries {
        repository_id: repo.id,
        branch: "main".into(),
        runner_label: "x".into(),
        suite: String::new(),
    };
    let new = NewBisection {
        series: series.clone(),
        benchmark: "parse".into(),
        metric: "wall_time".into(),
        regression_id: None,
        source_comparison: None,
        good_sha: "c0".into(),
        bad_sha: "c5".into(),
        requested_by: Some("api".into()),
    };
    let (search, created) = store.create_bisection(&new).await.unwrap();
    assert!(created);
    assert_eq!(search.state, BisectionState::Running);
    let (again, created) = store.create_bisection(&new).await.unwrap();
    assert_eq!(
        (again.id, created),
        (search.id, false),
        "one running search"
    );
    let rows = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].kind, MAIN_BISECT);
    assert_eq!(rows[0].payload["bisection_id"], search.id);
    store
        .outbox_delivered(rows[0].id, &rows[0].lease)
        .await
        .unwrap();

    let commits: Vec<RangeCommit> = ["c0", "c1", "c5"]
        .iter()
        .map(|sha| RangeCommit {
            sha: (*sha).into(),
            pr: Some(3),
            title: "Faster (#3)".into(),
        })
        .collect();
    store
        .set_bisection_commits(search.id, &commits)
        .await
        .unwrap();
    store
        .add_bisection_probe(search.id, 0, "c0", "c5")
        .await
        .unwrap();
    assert!(matches!(
        store.add_bisection_probe(search.id, 0, "c0", "c5").await,
        Err(StoreError::Conflict(_))
    ));
    // The probe's comparison (no PR, no branch) ends: the search gets its next row.
    let probe = store
        .create_comparison(&comparison(&repo, None, "c5", "x", jobs(1, 3)).between("c0", "c5"))
        .await
        .unwrap();
    store.bisection_waits_on(search.id, probe.id).await.unwrap();
    store.bisection_waits_on(search.id, probe.id).await.unwrap();
    let pair = store
        .comparisons_of_pair(repo.id, "x", "c0", "c5")
        .await
        .unwrap();
    assert_eq!(pair.iter().map(|c| c.id).collect::<Vec<_>>(), [probe.id]);
    let claim = store
        .claim_job(r.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert!(store.claim_outbox(10, LEASE).await.unwrap().is_empty());
    store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    let rows = store.claim_outbox(10, LEASE).await.unwrap();
    assert_eq!(
        rows.iter().map(|m| m.kind.as_str()).collect::<Vec<_>>(),
        [MAIN_BISECT],
        "{rows:?}"
    );
    store
        .outbox_delivered(rows[0].id, &rows[0].lease)
        .await
        .unwrap();

    let end = ProbeEnd {
        state: ProbeState::Decided,
        lower: Some(0.1),
        upper: Some(0.2),
        rounds: 3,
        comparisons: vec![probe.id],
        note: None,
    };
    assert!(store.end_bisection_probe(search.id, 0, &end).await.unwrap());
    assert!(
        !store.end_bisection_probe(search.id, 0, &end).await.unwrap(),
        "ended once"
    );
    let probes = store.bisection_probes(search.id).await.unwrap();
    assert_eq!(probes.len(), 1);
    assert_eq!(
        (
            probes[0].state,
            probes[0].lower,
            probes[0].rounds,
            probes[0].comparisons.clone()
        ),
        (ProbeState::Decided, Some(0.1), 3, vec![probe.id])
    );
    let outcome = SearchOutcome {
        kind: OutcomeKind::Culprit,
        commit: Some(commits[2].clone()),
        change: Some(0.1),
        lower: Some(0.05),
        upper: Some(0.15),
        after: None,
        upto: None,
        skipped: vec![SkippedCommit {
            sha: commits[1].sha.clone(),
            note: "the build failed".into(),
        }],
        commits: commits.len() - 1,
        probes: 1,
        rounds: 3,
        alpha: 0.05,
        reason: None,
    };
    assert!(
        store
            .finish_bisection(search.id, BisectionState::Done, &outcome)
            .await
            .unwrap()
    );
    assert!(
        !store
            .finish_bisection(search.id, BisectionState::Failed, &outcome)
            .await
            .unwrap()
    );
    let done = store.bisection(search.id).await.unwrap().unwrap();
    assert_eq!(done.state, BisectionState::Done);
    assert_eq!(done.commits, Some(commits));
    assert_eq!(done.outcome, Some(outcome));
    assert!(store.running_bisections().await.unwrap().is_empty());
    // Ended, the same range may be searched again.
    let (third, created) = store.create_bisection(&new).await.unwrap();
    assert!(created);
    assert_ne!(third.id, search.id);
    let listed: Vec<i64> = store
        .bisections(repo.id)
        .await
        .unwrap()
        .iter()
        .map(|b| b.id)
        .collect();
    assert_eq!(listed, [third.id, search.id]);
}
