//! Claiming, leases and the reaper.

use crate::support::*;
use benchgate_store::*;
use std::collections::HashSet;
use std::sync::Arc;

pub async fn migrations_are_current(store: Arc<dyn Store>) {
    assert!(store.readiness().await.is_ready());
    store.migrate().await.expect("migrating twice is a no-op");
    assert!(store.readiness().await.is_ready());
    assert!(["sqlite", "postgres"].contains(&store.backend()));
}

pub async fn concurrent_claimers_take_each_job_once(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let created = store
        .create_comparison(&comparison(&repo, None, "h1", "quiet", jobs(200, 3)))
        .await
        .unwrap();
    assert_eq!(created.jobs.len(), 200);
    let mut claimers = Vec::new();
    for i in 0..8 {
        let store = store.clone();
        let runner = runner(&store, &format!("r{i}"), &["quiet"]).await.runner;
        claimers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(claim) = store
                .claim_job(runner.id, &labels(&["quiet"]), LEASE)
                .await
                .expect("claim")
            {
                assert_eq!(claim.job.claimed_by, Some(runner.id));
                mine.push(claim.job.id);
            }
            mine
        }));
    }
    let mut all = Vec::new();
    for c in claimers {
        all.extend(c.await.unwrap());
    }
    let unique: HashSet<_> = all.iter().copied().collect();
    assert_eq!(all.len(), 200, "every job claimed");
    assert_eq!(unique.len(), 200, "no job claimed twice");
    assert_eq!(unique, created.jobs.into_iter().collect::<HashSet<_>>());
    let depth = store.queue_depth().await.unwrap();
    assert_eq!((depth.queued, depth.running), (0, 200));
}

pub async fn claims_follow_priority_age_label_and_pin(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["x"]).await.runner;
    let old = store
        .create_comparison(&comparison(&repo, Some(1), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let mut urgent = comparison(&repo, Some(2), "h2", "x", jobs(1, 3));
    urgent.jobs[0].priority = Priority::INTERACTIVE;
    let urgent = store.create_comparison(&urgent).await.unwrap();
    store
        .create_comparison(&comparison(&repo, Some(3), "h3", "arm", jobs(1, 3)))
        .await
        .unwrap();
    let calibration = store
        .enqueue_calibration(&NewCalibration {
            runner_id: r2.id,
            repository_id: repo.id,
            sha: "a".repeat(40),
            runner_label: "x".into(),
            config: config(),
            rounds: 10,
            priority: Priority::INTERACTIVE,
            max_attempts: 3,
        })
        .await
        .unwrap();

    let x = labels(&["x"]);
    let first = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(
        first.job.id, urgent.jobs[0],
        "interactive before older normal"
    );
    assert_eq!(first.job.attempts, 1);
    assert_eq!(first.job.state, JobState::Running);
    let second = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(second.job.id, old.jobs[0]);
    assert!(
        store.claim_job(r1.id, &x, LEASE).await.unwrap().is_none(),
        "other labels and other runners' calibrations are not r1's"
    );
    let pinned = store.claim_job(r2.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(pinned.job.id, calibration);
    assert_eq!(pinned.job.kind, JobKind::Calibration);
    assert_eq!(pinned.job.base_sha, pinned.job.head_sha);
    assert_eq!(
        store.latest_calibration(r2.id, repo.id).await.unwrap(),
        Some(pinned.job.created_at)
    );
    let state = store.comparison(urgent.id).await.unwrap().unwrap().state;
    assert_eq!(state, ComparisonState::Running);
    let active = store.active_jobs().await.unwrap();
    assert_eq!(active.len(), 4);
    assert_eq!(
        active
            .iter()
            .filter(|j| j.state == JobState::Running)
            .count(),
        3
    );
}

pub async fn late_upload_after_reap_is_lease_lost(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let created = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let job = created.jobs[0];
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    store
        .upload_round(job, &claim.lease, &round(0, 100.0, 110.0))
        .await
        .unwrap();

    let reaped = store.reap_expired_leases(much_later()).await.unwrap();
    assert_eq!(reaped.len(), 1);
    assert_eq!(
        (reaped[0].id, reaped[0].state, reaped[0].attempts),
        (job, JobState::Queued, 1)
    );

    let late = store
        .upload_round(job, &claim.lease, &round(1, 100.0, 110.0))
        .await;
    assert!(matches!(late, Err(StoreError::LeaseLost)), "{late:?}");
    let hb = store.heartbeat(job, &claim.lease, LEASE).await;
    assert!(matches!(hb, Err(StoreError::LeaseLost)), "{hb:?}");
    let done = store
        .complete_job(job, &claim.lease, &JobOutcome::Succeeded { log_tail: None })
        .await;
    assert!(matches!(done, Err(StoreError::LeaseLost)), "{done:?}");
    let wrong = store
        .upload_round(job, &LeaseToken("nope".into()), &round(1, 1.0, 1.0))
        .await;
    assert!(matches!(wrong, Err(StoreError::LeaseLost)));

    let again = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.job.attempts, 2);
    store
        .upload_round(job, &again.lease, &round(0, 100.0, 111.0))
        .await
        .unwrap();
    let hb = store.heartbeat(job, &again.lease, LEASE).await.unwrap();
    assert!(!hb.cancel_requested);
    assert!(hb.lease_expires_at >= again.lease_expires_at);
    let ok = JobOutcome::Succeeded {
        log_tail: Some("fine".into()),
    };
    store.complete_job(job, &again.lease, &ok).await.unwrap();
    store
        .complete_job(job, &again.lease, &ok)
        .await
        .expect("a retried complete is harmless");
    let series = store.job_samples(job).await.unwrap();
    let attempts: Vec<i64> = series[0].samples.iter().map(|s| s.attempt).collect();
    assert_eq!(
        attempts,
        vec![1, 1, 2, 2],
        "the first attempt's samples are kept apart"
    );
    let state = store.comparison(created.id).await.unwrap().unwrap().state;
    assert_eq!(state, ComparisonState::Done);
}

pub async fn reupload_is_idempotent(store: Arc<dyn Store>) {
    let (created, claim) = one_claimed_job(&store).await;
    let first = store
        .upload_round(claim.job.id, &claim.lease, &round(0, 100.0, 110.0))
        .await;
    assert_eq!(
        first.unwrap(),
        UploadReceipt {
            inserted: 2,
            duplicates: 0
        }
    );
    // A retry after a lost response, even with different numbers, keeps the first write.
    let again = store
        .upload_round(claim.job.id, &claim.lease, &round(0, 1.0, 2.0))
        .await;
    assert_eq!(
        again.unwrap(),
        UploadReceipt {
            inserted: 0,
            duplicates: 2
        }
    );
    let series = store.comparison_samples(created.id).await.unwrap();
    let values: Vec<f64> = series[0].samples.iter().map(|s| s.value).collect();
    assert_eq!(values.len(), 2);
    assert!(values.contains(&100.0) && values.contains(&110.0));
}

pub async fn reaper_requeues_then_fails_after_max_attempts(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let created = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 2)))
        .await
        .unwrap();
    let x = labels(&["x"]);
    store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    let first = store.reap_expired_leases(much_later()).await.unwrap();
    assert_eq!(first[0].state, JobState::Queued);
    let job = store.job(created.jobs[0]).await.unwrap().unwrap();
    assert_eq!(
        (job.state, job.claimed_by, job.attempts),
        (JobState::Queued, None, 1)
    );

    store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    let second = store.reap_expired_leases(much_later()).await.unwrap();
    assert_eq!((second[0].state, second[0].attempts), (JobState::Failed, 2));
    let job = store.job(created.jobs[0]).await.unwrap().unwrap();
    assert_eq!(job.state, JobState::Failed);
    let reason = job.last_error.unwrap();
    assert!(
        reason.contains("lease expired on attempt 2 of 2"),
        "{reason}"
    );
    assert!(job.finished_at.is_some());
    assert!(store.claim_job(r1.id, &x, LEASE).await.unwrap().is_none());
    let state = store.comparison(created.id).await.unwrap().unwrap().state;
    assert_eq!(state, ComparisonState::Failed);
}

pub async fn an_interrupted_attempt_is_run_again_until_attempts_run_out(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let created = store
        .create_comparison(&comparison(&repo, Some(4), "h1", "x", jobs(1, 2)))
        .await
        .unwrap();
    let x = labels(&["x"]);
    let full = JobOutcome::Interrupted {
        reason: "build: No space left on device".into(),
        log_tail: "write error".into(),
    };
    let first = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    store
        .complete_job(first.job.id, &first.lease, &full)
        .await
        .unwrap();
    let job = store.job(created.jobs[0]).await.unwrap().unwrap();
    assert_eq!(
        (job.state, job.claimed_by, job.attempts),
        (JobState::Queued, None, 1)
    );
    assert!(
        job.last_error
            .unwrap()
            .starts_with("interrupted: build: No space")
    );
    let state = store.comparison(created.id).await.unwrap().unwrap().state;
    assert!(!state.is_finished(), "{state:?}");
    // The old lease writes nothing more.
    assert!(matches!(
        store.complete_job(first.job.id, &first.lease, &full).await,
        Err(StoreError::LeaseLost)
    ));

    let second = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(second.job.attempts, 2);
    store
        .complete_job(second.job.id, &second.lease, &full)
        .await
        .unwrap();
    let job = store.job(created.jobs[0]).await.unwrap().unwrap();
    assert_eq!((job.state, job.claimed_by), (JobState::Failed, Some(r1.id)));
    assert!(job.finished_at.is_some());
    let state = store.comparison(created.id).await.unwrap().unwrap().state;
    assert_eq!(state, ComparisonState::Failed);
}

pub async fn live_leases_are_not_reaped(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 2)))
        .await
        .unwrap();
    let claim = store
        .claim_job(r1.id, &labels(&["x"]), LEASE)
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .reap_expired_leases(chrono::Utc::now())
            .await
            .unwrap()
            .is_empty()
    );
    let hb = store
        .heartbeat(claim.job.id, &claim.lease, LEASE * 60)
        .await
        .unwrap();
    let before_extension = claim.lease_expires_at + chrono::TimeDelta::seconds(1);
    assert!(
        store
            .reap_expired_leases(before_extension)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(hb.lease_expires_at > before_extension);
}

pub async fn release_gives_the_job_back(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 1)))
        .await
        .unwrap();
    let x = labels(&["x"]);
    let claim = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    store.release_job(claim.job.id, &claim.lease).await.unwrap();
    let again = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(again.job.id, claim.job.id);
    assert_eq!(again.job.attempts, 2, "attempt numbers are never reused");
    assert_eq!(
        again.job.max_attempts, 2,
        "a graceful release does not use up an attempt"
    );
    let stale = store.release_job(claim.job.id, &claim.lease).await;
    assert!(matches!(stale, Err(StoreError::LeaseLost)));
}

pub async fn calibrations_without_session_are_found_again(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let x = labels(&["x"]);
    let calibrate = || NewCalibration {
        runner_id: r1.id,
        repository_id: repo.id,
        sha: "a".repeat(40),
        runner_label: "x".into(),
        config: config(),
        rounds: 5,
        priority: Priority::NORMAL,
        max_attempts: 1,
    };
    let succeeded = JobOutcome::Succeeded { log_tail: None };
    let failed = JobOutcome::Failed {
        reason: "build failed".into(),
        log_tail: String::new(),
    };
    // Three calibrations end (done with a session, done without one, failed), one waits.
    let mut finished = Vec::new();
    for outcome in [&succeeded, &succeeded, &failed] {
        store.enqueue_calibration(&calibrate()).await.unwrap();
        let claim = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
        store
            .complete_job(claim.job.id, &claim.lease, outcome)
            .await
            .unwrap();
        finished.push(claim.job.id);
    }
    // An A/B job that is done never has a session and is not a calibration.
    let c = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 1)))
        .await
        .unwrap();
    let ab = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(ab.job.id, c.jobs[0]);
    store
        .complete_job(ab.job.id, &ab.lease, &succeeded)
        .await
        .unwrap();
    store.enqueue_calibration(&calibrate()).await.unwrap();

    let session = |job_id| AaSession {
        job_id: Some(job_id),
        key: FloorKey {
            runner_id: r1.id,
            repository_id: repo.id,
            benchmark: "parse".into(),
            metric: "time".into(),
        },
        pairs: 5,
        mean: 0.0,
        spread: 0.01,
        layout: false,
        recorded_at: chrono::Utc::now(),
    };
    store
        .record_aa_session(&session(finished[0]))
        .await
        .unwrap();

    let hour_ago = chrono::Utc::now() - chrono::TimeDelta::hours(1);
    let lost = store
        .calibrations_without_session(hour_ago, 10)
        .await
        .unwrap();
    assert_eq!(
        lost.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![finished[1]],
        "only the done calibration without a session"
    );
    assert_eq!(lost[0].kind, JobKind::Calibration);
    assert_eq!(lost[0].state, JobState::Done);
    assert!(
        store
            .calibrations_without_session(much_later(), 10)
            .await
            .unwrap()
            .is_empty(),
        "jobs finished before the cutoff are not listed"
    );
    assert!(
        store
            .calibrations_without_session(hour_ago, 0)
            .await
            .unwrap()
            .is_empty()
    );

    // What `measure = "auto"` reads: the runner's done calibrations of the repository, newest
    // first, finished before a given time (never the failed one, the A/B job or the queued one).
    let done = store
        .finished_calibrations(r1.id, repo.id, much_later(), 10)
        .await
        .unwrap();
    assert_eq!(
        done.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![finished[1], finished[0]]
    );
    let newest = store
        .finished_calibrations(r1.id, repo.id, much_later(), 1)
        .await
        .unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].id, finished[1]);
    assert!(
        store
            .finished_calibrations(r1.id, repo.id, hour_ago, 10)
            .await
            .unwrap()
            .is_empty(),
        "none finished an hour ago"
    );
    let other = runner(&store, "r2", &["x"]).await.runner;
    assert!(
        store
            .finished_calibrations(other.id, repo.id, much_later(), 10)
            .await
            .unwrap()
            .is_empty(),
        "another runner's calibrations are not this one's"
    );

    // Recording it (again, or for the first time) takes it off the list.
    store
        .record_aa_session(&session(finished[1]))
        .await
        .unwrap();
    store
        .record_aa_session(&session(finished[1]))
        .await
        .unwrap();
    assert!(
        store
            .calibrations_without_session(hour_ago, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A job whose builds were byte-identical ends done without a round, keeping what was compared
/// for the report; the comparison is done.
pub async fn an_identical_build_completes_the_job_unmeasured(store: Arc<dyn Store>) {
    let (created, claim) = one_claimed_job(&store).await;
    let build = benchgate_api::agent::IdenticalBuild {
        files: vec!["target/release/bench".into()],
        bytes: 4096,
        sha256: "ab".repeat(32),
    };
    let outcome = JobOutcome::IdenticalBuild {
        build: build.clone(),
    };
    store
        .complete_job(claim.job.id, &claim.lease, &outcome)
        .await
        .unwrap();
    let jobs = store.comparison_jobs(created.id).await.unwrap();
    assert_eq!(jobs[0].state, JobState::Done);
    assert_eq!(jobs[0].identical_build.as_ref(), Some(&build));
    assert!(store.job_samples(claim.job.id).await.unwrap().is_empty());
    let state = store.comparison(created.id).await.unwrap().unwrap().state;
    assert_eq!(state, ComparisonState::Done);
}

/// A queued comparison's place is the claim's own order: the jobs `queue_place` lists ahead of
/// it are exactly the ones a runner of its label claims first (priority, then age; a pinned
/// calibration too, for its runner), other labels never; once one of its jobs runs it has no
/// place. Round landings and finished jobs give the pace of what waits.
pub async fn a_queued_comparison_stands_where_the_claims_will_take_it(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let old = store
        .create_comparison(&comparison(&repo, Some(1), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let mut urgent = comparison(&repo, Some(2), "h2", "x", jobs(1, 3));
    urgent.jobs[0].priority = Priority::INTERACTIVE;
    let urgent = store.create_comparison(&urgent).await.unwrap();
    store
        .create_comparison(&comparison(&repo, Some(3), "h3", "arm", jobs(1, 3)))
        .await
        .unwrap();
    let calibration = |priority| NewCalibration {
        runner_id: r1.id,
        repository_id: repo.id,
        sha: "a".repeat(40),
        runner_label: "x".into(),
        config: config(),
        rounds: 6,
        priority,
        max_attempts: 3,
    };
    let pinned = store
        .enqueue_calibration(&calibration(Priority::INTERACTIVE))
        .await
        .unwrap();
    let mine = store
        .create_comparison(&comparison(&repo, Some(4), "h4", "x", jobs(2, 3)))
        .await
        .unwrap();
    // Behind it: same priority and younger, or lower priority.
    store
        .enqueue_calibration(&calibration(Priority::BACKGROUND))
        .await
        .unwrap();
    store
        .create_comparison(&comparison(&repo, Some(5), "h5", "x", jobs(1, 3)))
        .await
        .unwrap();

    let place = store.queue_place(mine.id).await.unwrap().expect("queued");
    assert_eq!(place.job.id, mine.jobs[0], "its first job is claimed first");
    let ahead: Vec<JobId> = place.ahead.iter().map(|j| j.id).collect();
    assert_eq!(ahead, vec![urgent.jobs[0], pinned, old.jobs[0]]);
    assert!(place.running.is_empty());

    // The claims take them in that order, then this comparison's job.
    let x = labels(&["x"]);
    let first = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(first.job.id, ahead[0]);
    let place = store.queue_place(mine.id).await.unwrap().unwrap();
    assert_eq!(
        place.ahead.iter().map(|j| j.id).collect::<Vec<_>>(),
        ahead[1..].to_vec(),
        "one fewer ahead once it was claimed"
    );
    assert_eq!(
        place.running.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![first.job.id]
    );
    // Rounds land on the running job: its pace is measured from them.
    for r in 0..3 {
        store
            .upload_round(first.job.id, &first.lease, &round(r, 100.0, 110.0))
            .await
            .unwrap();
    }
    let landings = store.round_landings(first.job.id).await.unwrap();
    assert_eq!(
        landings
            .iter()
            .map(|l| (l.attempt, l.round))
            .collect::<Vec<_>>(),
        vec![(1, 0), (1, 1), (1, 2)]
    );
    assert!(landings.windows(2).all(|w| w[0].at <= w[1].at));
    let succeeded = JobOutcome::Succeeded { log_tail: None };
    store
        .complete_job(first.job.id, &first.lease, &succeeded)
        .await
        .unwrap();
    let finished = store
        .finished_jobs(repo.id, "x", JobKind::Comparison, 10)
        .await
        .unwrap();
    assert_eq!(
        finished.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![first.job.id]
    );
    assert!(
        store
            .finished_jobs(repo.id, "arm", JobKind::Comparison, 10)
            .await
            .unwrap()
            .is_empty()
    );

    for want in &ahead[1..] {
        let claim = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
        assert_eq!(claim.job.id, *want);
    }
    let place = store.queue_place(mine.id).await.unwrap().unwrap();
    assert!(place.ahead.is_empty(), "next in line");
    let claimed = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    assert_eq!(claimed.job.id, mine.jobs[0]);
    assert_eq!(
        store.queue_place(mine.id).await.unwrap(),
        None,
        "no place while a job of it runs, though its second job waits"
    );
}
