//! What the server writes after an agent's call must not be lost or left stale: an A/A
//! session whose recording was interrupted is recorded by the background pass, and a result
//! that can no longer be computed is withdrawn instead of gating the check. On SQLite (the
//! store contract runs the queries on Postgres too).

use std::sync::Arc;
use std::time::Duration;

use benchgate_api::{Measurement, Side};
use benchgate_server::{calibration, comparison_analysis};
use benchgate_store::*;

const LEASE: Duration = Duration::from_secs(60);

struct Fixture {
    store: Arc<dyn Store>,
    repo: Repository,
    runner: Runner,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let (store, repo, dir, _) = crate::sqlite_with_repository().await;
    let runner = store
        .add_runner("r1", &["x".to_owned()])
        .await
        .unwrap()
        .runner;
    Fixture {
        store,
        repo,
        runner,
        _dir: dir,
    }
}

/// One round of `parse`/`time` with these base and head values.
fn round(round: i64, base: f64, head: f64) -> RoundUpload {
    let sample = |side, position, value| SampleInput {
        side,
        position,
        measurement: Measurement {
            benchmark: "parse".into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
            run: None,
        },
    };
    RoundUpload {
        round,
        samples: vec![
            sample(Side::Base, round % 2, base),
            sample(Side::Head, 1 - round % 2, head),
        ],
    }
}

/// Small deterministic wobble around 1000 ns.
fn timing(i: i64, phase: f64) -> f64 {
    1000.0 * (1.0 + 0.01 * ((i as f64) * 1.7 + phase).sin())
}

#[tokio::test]
async fn a_session_lost_at_completion_is_recorded_by_the_background_pass() {
    let f = fixture().await;
    f.store
        .enqueue_calibration(&NewCalibration {
            runner_id: f.runner.id,
            repository_id: f.repo.id,
            sha: "a".repeat(40),
            runner_label: "x".into(),
            config: serde_json::from_value(
                serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
            )
            .unwrap(),
            rounds: 8,
            priority: Priority::INTERACTIVE,
            max_attempts: 3,
        })
        .await
        .unwrap();
    let claim = f
        .store
        .claim_job(f.runner.id, &["x".to_owned()], LEASE)
        .await
        .unwrap()
        .expect("the calibration job");
    for i in 0..8 {
        f.store
            .upload_round(
                claim.job.id,
                &claim.lease,
                &round(i, timing(i, 0.0), timing(i, 2.0)),
            )
            .await
            .unwrap();
    }
    // The job is done, then the server stops before `record_session` runs.
    f.store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    let key = FloorKey {
        runner_id: f.runner.id,
        repository_id: f.repo.id,
        benchmark: "parse".into(),
        metric: "time".into(),
    };
    assert!(f.store.noise_floor(&key).await.unwrap().is_none());
    assert!(
        f.store
            .latest_calibration(f.runner.id, f.repo.id)
            .await
            .unwrap()
            .is_some(),
        "the schedule counts the job as a calibration, so only this pass can recover it"
    );

    let day = Duration::from_secs(86_400);
    assert_eq!(
        calibration::record_missing_sessions(&f.store, day)
            .await
            .unwrap(),
        1
    );
    let sessions = f.store.aa_sessions(&key).await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].job_id, Some(claim.job.id));
    assert_eq!(sessions[0].pairs, 8);
    let floor = f.store.noise_floor(&key).await.unwrap().expect("a floor");
    assert_eq!((floor.sessions, floor.pairs), (1, 8));

    // Done once; the next pass finds nothing and changes nothing.
    assert_eq!(
        calibration::record_missing_sessions(&f.store, day)
            .await
            .unwrap(),
        0
    );
    assert_eq!(f.store.aa_sessions(&key).await.unwrap().len(), 1);
    assert_eq!(f.store.noise_floor_history(&key).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_result_that_can_no_longer_be_computed_is_withdrawn() {
    let f = fixture().await;
    let created = f
        .store
        .create_comparison(
            &NewComparison::new(
                f.repo.id,
                "b".repeat(40),
                "h".repeat(40),
                "x",
                serde_json::from_value(
                    serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
                )
                .unwrap(),
            )
            .pr(7)
            .planned(20)
            .jobs(1, NewJob::rounds(10)),
        )
        .await
        .unwrap();
    let claim = f
        .store
        .claim_job(f.runner.id, &["x".to_owned()], LEASE)
        .await
        .unwrap()
        .expect("the comparison's job");
    for i in 0..6 {
        f.store
            .upload_round(
                claim.job.id,
                &claim.lease,
                &round(i, timing(i, 0.0), 1.2 * timing(i, 1.0)),
            )
            .await
            .unwrap();
    }
    comparison_analysis::analyze_comparison(&f.store, created.id)
        .await
        .unwrap();
    let stored = f.store.comparison_results(created.id).await.unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].result.verdict, benchgate_api::VerdictKind::Slower);

    // A later round measured 0 ns: the series cannot be analysed any more.
    f.store
        .upload_round(claim.job.id, &claim.lease, &round(6, timing(6, 0.0), 0.0))
        .await
        .unwrap();
    comparison_analysis::analyze_comparison(&f.store, created.id)
        .await
        .unwrap();
    let stored = f.store.comparison_results(created.id).await.unwrap();
    // The earlier verdict must not stay for the check to gate on: the row says why instead.
    assert_eq!(stored.len(), 1, "{stored:?}");
    let row = &stored[0].result;
    assert_eq!(
        row.verdict,
        benchgate_api::VerdictKind::NotAnalysed,
        "{row:?}"
    );
    assert!(
        row.reason.as_deref().is_some_and(|r| r.contains("0")),
        "{row:?}"
    );
    let results: Vec<_> = stored.iter().map(|s| s.result.clone()).collect();
    assert_eq!(
        benchgate_stats::outcome(&results, benchgate_api::FailOn::Regression),
        benchgate_stats::GateOutcome::Undecided
    );
}
