//! Comparisons over a PR's life: new heads, closing, `/rebench`.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

pub async fn new_head_supersedes_old_head(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let old = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(2, 3)))
        .await
        .unwrap();
    let other_pr = store
        .create_comparison(&comparison(&repo, Some(8), "h9", "x", jobs(1, 3)))
        .await
        .unwrap();
    let running = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(running.job.id, old.jobs[0]);

    let new = store
        .create_comparison(&comparison(&repo, Some(7), "h2", "x", jobs(1, 3)))
        .await
        .unwrap();
    assert_eq!(new.superseded, vec![old.id]);
    let old_state = store.comparison(old.id).await.unwrap().unwrap().state;
    assert_eq!(old_state, ComparisonState::Superseded);
    let queued_old = store.job(old.jobs[1]).await.unwrap().unwrap();
    assert_eq!(queued_old.state, JobState::Cancelled);
    let hb = store
        .heartbeat(running.job.id, &running.lease, LEASE)
        .await
        .unwrap();
    assert!(
        hb.cancel_requested,
        "the running job learns it at its next heartbeat"
    );
    let ok = JobOutcome::Succeeded { log_tail: None };
    store
        .complete_job(running.job.id, &running.lease, &ok)
        .await
        .unwrap();
    let ended = store.job(running.job.id).await.unwrap().unwrap();
    assert_eq!(ended.state, JobState::Cancelled);
    assert_eq!(
        store.comparison(old.id).await.unwrap().unwrap().state,
        ComparisonState::Superseded,
        "finishing a job does not revive a superseded comparison"
    );
    let other = store.comparison(other_pr.id).await.unwrap().unwrap();
    assert_eq!(
        other.state,
        ComparisonState::Queued,
        "another PR is untouched"
    );
    let of_pr = store.pull_request_comparisons(repo.id, 7).await.unwrap();
    assert_eq!(
        of_pr.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec![new.id, old.id]
    );
    assert_eq!(of_pr[0].repository, "acme/widgets");
    assert_eq!(of_pr[0].config.benchmark.format, "criterion");
    let recent = store.recent_comparisons(2).await.unwrap();
    assert_eq!(recent[0].id, new.id);
    assert_eq!(recent.len(), 2);
}

pub async fn closing_a_pr_cancels_its_jobs(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(3, 3)))
        .await
        .unwrap();
    let running = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.cancel_pull_request(repo.id, 7).await.unwrap(), 3);
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Cancelled
    );
    assert!(
        store
            .claim_job(r1.id, &labels(&["x"]), LEASE)
            .await
            .unwrap()
            .is_none()
    );
    let hb = store
        .heartbeat(running.job.id, &running.lease, LEASE)
        .await
        .unwrap();
    assert!(hb.cancel_requested);
    // A lease expiring on a cancelled job ends it cancelled, not requeued.
    let reaped = store.reap_expired_leases(much_later()).await.unwrap();
    assert_eq!(reaped[0].state, JobState::Cancelled);
    assert_eq!(store.queue_depth().await.unwrap(), QueueDepth::default());
    assert_eq!(store.cancel_pull_request(repo.id, 7).await.unwrap(), 0);
}

pub async fn cancelling_one_comparison_leaves_the_others(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let group = store
        .create_comparison(&comparison(&repo, None, "g1", "x", jobs(2, 3)))
        .await
        .unwrap();
    let other = store
        .create_comparison(&comparison(&repo, None, "g2", "x", jobs(1, 3)))
        .await
        .unwrap();
    let running = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(running.job.comparison_id, Some(group.id));
    // One running job asked to stop, one queued job cancelled.
    assert_eq!(store.cancel_comparison(group.id).await.unwrap(), 2);
    let cancelled = store.comparison(group.id).await.unwrap().unwrap();
    assert_eq!(cancelled.state, ComparisonState::Cancelled);
    let hb = store
        .heartbeat(running.job.id, &running.lease, LEASE)
        .await
        .unwrap();
    assert!(hb.cancel_requested);
    let next = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        next.job.comparison_id,
        Some(other.id),
        "the other is untouched"
    );
    // Cancelling again, or a finished comparison, changes nothing.
    assert_eq!(store.cancel_comparison(group.id).await.unwrap(), 0);
}

pub async fn rebench_adds_rounds(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    let ok = JobOutcome::Succeeded { log_tail: None };
    store
        .complete_job(claim.job.id, &claim.lease, &ok)
        .await
        .unwrap();
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Done
    );

    let more = vec![NewJob {
        rounds: 10,
        priority: Priority::INTERACTIVE,
        max_attempts: 3,
        origin: Some("outbox:41:comparison:1".into()),
    }];
    let added = store.add_rounds(c.id, &more).await.unwrap();
    assert_eq!(added.len(), 1);
    // The same request carried out again (its answer lost, or on another replica) adds nothing.
    assert!(store.add_rounds(c.id, &more).await.unwrap().is_empty());
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Running
    );
    let jobs = store.comparison_jobs(c.id).await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[1].head_sha, "h1");
    assert_eq!(jobs[1].priority, Priority::INTERACTIVE);

    store.cancel_pull_request(repo.id, 7).await.unwrap();
    let refused = store.add_rounds(c.id, &more).await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(_))),
        "{refused:?}"
    );
    let missing = store.add_rounds(ComparisonId(9999), &more).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
}

pub async fn concurrent_completions_finish_the_comparison(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let c = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(32, 3)))
        .await
        .unwrap();
    let mut workers = Vec::new();
    for i in 0..8 {
        let store = store.clone();
        let runner = runner(&store, &format!("r{i}"), &["x"]).await.runner;
        workers.push(tokio::spawn(async move {
            let ok = JobOutcome::Succeeded { log_tail: None };
            while let Some(claim) = store
                .claim_job(runner.id, &labels(&["x"]), LEASE)
                .await
                .unwrap()
            {
                store
                    .complete_job(claim.job.id, &claim.lease, &ok)
                    .await
                    .unwrap();
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    let state = store.comparison(c.id).await.unwrap().unwrap().state;
    assert_eq!(
        state,
        ComparisonState::Done,
        "the last completion sees all the others"
    );
}

/// Claims and delivers every due outbox row; returns their dedupe keys, sorted.
async fn sent_keys(store: &Arc<dyn Store>) -> Vec<String> {
    let mut keys = Vec::new();
    for row in store.claim_outbox(100, LEASE).await.unwrap() {
        if row.kind == REPORT_CHECK || row.kind == REPORT_COMMENT {
            let id = row.payload["comparison_id"].as_i64().unwrap();
            assert_eq!(row.dedupe_key, Some(format!("{}:{id}", row.kind)));
        }
        keys.push(row.dedupe_key.clone().unwrap_or_default());
        store.outbox_delivered(row.id, &row.lease).await.unwrap();
    }
    keys.sort();
    keys
}

fn reports(id: ComparisonId) -> Vec<String> {
    vec![format!("report.check:{id}"), format!("report.comment:{id}")]
}

pub async fn every_state_change_of_a_pr_comparison_enqueues_its_report(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let ok = JobOutcome::Succeeded { log_tail: None };
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 1)))
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, Vec::<String>::new());

    // queued → running → done: the pending rows take both changes.
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    store
        .complete_job(claim.job.id, &claim.lease, &ok)
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, reports(c.id));
    // A retried completion changes nothing and reports nothing.
    store
        .complete_job(claim.job.id, &claim.lease, &ok)
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, Vec::<String>::new());

    // /rebench: done → running again (a job has started, so the comment shows its rounds).
    store.add_rounds(c.id, &jobs(1, 1)).await.unwrap();
    assert_eq!(sent_keys(&store).await, reports(c.id));

    // Claims, releases and reaps report only what changes the comparison's state.
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sent_keys(&store).await, Vec::<String>::new());
    store.release_job(claim.job.id, &claim.lease).await.unwrap();
    assert_eq!(
        sent_keys(&store).await,
        Vec::<String>::new(),
        "released, the comparison is still running"
    );
    store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    store.reap_expired_leases(much_later()).await.unwrap();
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Done,
        "one job done is enough"
    );
    assert_eq!(sent_keys(&store).await, reports(c.id));

    let failing = store
        .create_comparison(&comparison(&repo, Some(8), "h1", "x", jobs(1, 1)))
        .await
        .unwrap();
    sent_keys(&store).await;
    store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    sent_keys(&store).await;
    store.reap_expired_leases(much_later()).await.unwrap();
    assert_eq!(
        store.comparison(failing.id).await.unwrap().unwrap().state,
        ComparisonState::Failed
    );
    assert_eq!(sent_keys(&store).await, reports(failing.id));

    // A newer head supersedes; closing the PR cancels.
    let old = store
        .create_comparison(&comparison(&repo, Some(9), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let new = store
        .create_comparison(&comparison(&repo, Some(9), "h2", "x", jobs(1, 3)))
        .await
        .unwrap();
    assert_eq!(new.superseded, vec![old.id]);
    assert_eq!(sent_keys(&store).await, reports(old.id));
    store.cancel_pull_request(repo.id, 9).await.unwrap();
    assert_eq!(sent_keys(&store).await, reports(new.id));

    // A comparison without a PR has no check run or comment to keep up to date.
    store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    store
        .complete_job(claim.job.id, &claim.lease, &ok)
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, Vec::<String>::new());
}

/// The dashboard's filters: repository, PR, runner (claimed a job or has results) and a
/// verdict among the stored results; unset fields match everything.
pub async fn comparisons_are_found_by_repository_pr_runner_and_verdict(store: Arc<dyn Store>) {
    let widgets = repo(&store, "acme/widgets").await;
    let gears = repo(&store, "acme/gears").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["y"]).await.runner;
    let w7 = store
        .create_comparison(&comparison(&widgets, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let w8 = store
        .create_comparison(&comparison(&widgets, Some(8), "h2", "y", jobs(1, 3)))
        .await
        .unwrap();
    let g7 = store
        .create_comparison(&comparison(&gears, Some(7), "h3", "x", jobs(1, 3)))
        .await
        .unwrap();
    // r1 claims w7's job; r2 has results in w8 without holding a job.
    let claimed = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.job.id, w7.jobs[0]);
    let slower = benchgate_api::BenchmarkResult::unanalysed(
        "parse",
        "time",
        "ns",
        Default::default(),
        benchgate_api::VerdictKind::Slower,
        "seeded".into(),
    );
    store
        .replace_comparison_results(w8.id, r2.id, 1, &[slower])
        .await
        .unwrap();

    let ids = |filter: ComparisonFilter| {
        let store = store.clone();
        async move {
            let found = store.find_comparisons(&filter, 10).await.unwrap();
            found.iter().map(|c| c.id).collect::<Vec<_>>()
        }
    };
    assert_eq!(
        ids(ComparisonFilter::default()).await,
        [g7.id, w8.id, w7.id]
    );
    let widgets_only = ComparisonFilter {
        repository: Some("acme/widgets".into()),
        ..Default::default()
    };
    assert_eq!(ids(widgets_only.clone()).await, [w8.id, w7.id]);
    let pr7 = ComparisonFilter {
        pr_number: Some(7),
        ..Default::default()
    };
    assert_eq!(ids(pr7).await, [g7.id, w7.id]);
    let widgets_pr7 = ComparisonFilter {
        pr_number: Some(7),
        ..widgets_only
    };
    assert_eq!(ids(widgets_pr7).await, [w7.id]);
    let by_runner = |name: &str| ComparisonFilter {
        runner: Some(name.into()),
        ..Default::default()
    };
    assert_eq!(ids(by_runner("r1")).await, [w7.id]);
    assert_eq!(ids(by_runner("r2")).await, [w8.id]);
    assert_eq!(ids(by_runner("nobody")).await, []);
    let by_verdict = |v| ComparisonFilter {
        verdict: Some(v),
        ..Default::default()
    };
    assert_eq!(
        ids(by_verdict(benchgate_api::VerdictKind::Slower)).await,
        [w8.id]
    );
    assert_eq!(
        ids(by_verdict(benchgate_api::VerdictKind::Faster)).await,
        []
    );
    let limited = store
        .find_comparisons(&ComparisonFilter::default(), 1)
        .await
        .unwrap();
    assert_eq!(limited.len(), 1);
}

fn profile_job(origin: &str) -> NewProfileJob {
    NewProfileJob {
        request: benchgate_api::agent::ProfileRequest {
            runs: 3,
            rows: vec!["parse wall_time".into()],
            requested_by: "verdict".into(),
        },
        priority: Priority::NORMAL,
        max_attempts: 2,
        origin: origin.into(),
    }
}

/// A profile job rides the queue and its lease like any job, but adds no round, never moves
/// its comparison's state, and reports through the comparison's comment and check.
pub async fn a_profile_job_leaves_the_comparison_alone(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let ok = JobOutcome::Succeeded { log_tail: None };
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 2)))
        .await
        .unwrap();
    let measuring = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(measuring.job.profile, None);
    // A measuring job has no profile to upload.
    let stacks = NewProfile {
        event: Some("cpu-clock".into()),
        unavailable: None,
        runs: 3,
        base_folded: "main;work 10\n".into(),
        head_folded: "main;work 10\nmain;slow_path 5\n".into(),
    };
    assert!(matches!(
        store
            .record_profile(measuring.job.id, &measuring.lease, &stacks)
            .await,
        Err(StoreError::Conflict(_))
    ));
    store
        .complete_job(measuring.job.id, &measuring.lease, &ok)
        .await
        .unwrap();
    sent_keys(&store).await;

    // Asked once per origin; the report says it is queued; the comparison stays done.
    let id = store
        .request_profile(c.id, &profile_job("profile:verdict"))
        .await
        .unwrap();
    assert!(id.is_some());
    assert_eq!(
        store
            .request_profile(c.id, &profile_job("profile:verdict"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(sent_keys(&store).await, reports(c.id));
    let done = store.comparison(c.id).await.unwrap().unwrap();
    assert_eq!(done.state, ComparisonState::Done);

    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(Some(claim.job.id), id);
    assert_eq!(claim.job.rounds, 0);
    assert_eq!(claim.job.profile.as_ref().unwrap().runs, 3);
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Done,
        "a running profile job does not reopen the comparison"
    );
    assert_eq!(sent_keys(&store).await, Vec::<String>::new());

    // The upload is fenced by the lease and reports; completing changes nothing more.
    let stale = LeaseToken("not-the-lease".into());
    assert!(matches!(
        store.record_profile(claim.job.id, &stale, &stacks).await,
        Err(StoreError::LeaseLost)
    ));
    store
        .record_profile(claim.job.id, &claim.lease, &stacks)
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, reports(c.id));
    store
        .complete_job(claim.job.id, &claim.lease, &ok)
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, Vec::<String>::new());
    let stored = store.comparison_profiles(c.id).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].job_id, claim.job.id);
    assert_eq!(stored[0].runner_id, r1.id);
    assert_eq!(stored[0].head_folded, stacks.head_folded);
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Done
    );
    assert!(
        store
            .comparison_samples(c.id)
            .await
            .unwrap()
            .iter()
            .all(|s| s.samples.is_empty()),
        "profiled runs are never samples"
    );

    // A failed profile job is reported too (the comment says it failed), and only then.
    store
        .request_profile(c.id, &profile_job("profile:again"))
        .await
        .unwrap();
    sent_keys(&store).await;
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    let failed = JobOutcome::Failed {
        reason: "perf died".into(),
        log_tail: String::new(),
    };
    store
        .complete_job(claim.job.id, &claim.lease, &failed)
        .await
        .unwrap();
    assert_eq!(sent_keys(&store).await, reports(c.id));
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().state,
        ComparisonState::Done,
        "a failed profile does not fail the comparison"
    );
}
