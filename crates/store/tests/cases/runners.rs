//! Runner registration, tokens and revocation.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

pub async fn runner_tokens_authenticate_until_revoked(store: Arc<dyn Store>) {
    let added = runner(&store, "quiet-1", &["linux-x86-quiet", "x86"]).await;
    let token = added.token.expose().to_string();
    assert_eq!(token.len(), 64, "256 bits as hex");
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(
        !format!("{:?}", added.token).contains(&token),
        "Debug never shows the token"
    );
    assert_eq!(added.runner.labels, labels(&["linux-x86-quiet", "x86"]));

    let other = runner(&store, "quiet-2", &["x86"]).await;
    assert_ne!(other.token.expose(), token);
    let authed = store.authenticate_runner(&token).await.unwrap().unwrap();
    assert_eq!(authed.id, added.runner.id);
    assert!(
        store
            .authenticate_runner("0".repeat(64).as_str())
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.authenticate_runner("").await.unwrap().is_none());

    let dup = store.add_runner("quiet-1", &labels(&["x"])).await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");

    let fingerprint = benchgate_api::MachineFingerprint {
        cpu_model: Some("EPYC 7B13".into()),
        logical_cores: 8,
        governor: Some("performance".into()),
        ..Default::default()
    };
    store
        .touch_runner(added.runner.id, Some(&fingerprint))
        .await
        .unwrap();
    store.touch_runner(added.runner.id, None).await.unwrap();
    let seen = store.runner(added.runner.id).await.unwrap().unwrap();
    assert!(seen.last_seen_at.is_some());
    assert_eq!(
        seen.fingerprint,
        Some(fingerprint),
        "a touch without fingerprint keeps it"
    );

    store.revoke_runner("quiet-1").await.unwrap();
    assert!(store.authenticate_runner(&token).await.unwrap().is_none());
    assert!(
        store
            .authenticate_runner(other.token.expose())
            .await
            .unwrap()
            .is_some()
    );
    let missing = store.revoke_runner("nobody").await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
    let all = store.list_runners().await.unwrap();
    assert_eq!(
        all.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["quiet-1", "quiet-2"]
    );
    assert!(all[0].revoked_at.is_some());
    let by_name = store.runner_by_name("quiet-2").await.unwrap().unwrap();
    assert_eq!(by_name.id, other.runner.id);
}

/// Revoking a runner cancels the jobs only it could take (its A/A calibrations), queued or
/// held: they would otherwise wait forever and count as running.
pub async fn revoking_a_runner_cancels_its_pinned_jobs(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let gone = runner(&store, "gone", &["x"]).await.runner;
    let other = runner(&store, "other", &["x"]).await.runner;
    let calibrate = |runner_id| NewCalibration {
        runner_id,
        repository_id: repo.id,
        sha: "a".repeat(40),
        runner_label: "x".into(),
        config: config(),
        rounds: 5,
        priority: Priority::NORMAL,
        max_attempts: 3,
    };
    let pinned = store
        .enqueue_calibration(&calibrate(gone.id))
        .await
        .unwrap();
    let kept = store
        .enqueue_calibration(&calibrate(other.id))
        .await
        .unwrap();
    store.revoke_runner("gone").await.unwrap();
    let job = store.job(pinned).await.unwrap().unwrap();
    assert_eq!(job.state, model::JobState::Cancelled);
    assert!(job.last_error.unwrap().contains("revoked"));
    let job = store.job(kept).await.unwrap().unwrap();
    assert_eq!(
        job.state,
        model::JobState::Queued,
        "other runners keep theirs"
    );
}

/// A runner's first calibration on a repository is enqueued once, however many claims (on any
/// number of servers) ask at the same moment; a due recalibration is enqueued once too.
pub async fn a_first_calibration_is_enqueued_once_under_concurrent_claims(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r = runner(&store, "fresh", &["x"]).await.runner;
    let new = NewCalibration {
        runner_id: r.id,
        repository_id: repo.id,
        sha: "a".repeat(40),
        runner_label: "x".into(),
        config: config(),
        rounds: 5,
        priority: Priority::INTERACTIVE,
        max_attempts: 3,
    };
    let attempts = (0..8).map(|_| {
        let (store, new) = (store.clone(), new.clone());
        tokio::spawn(async move { store.enqueue_calibration_unless_since(&new, None).await })
    });
    let mut enqueued = 0;
    for a in attempts {
        enqueued += usize::from(a.await.unwrap().unwrap().is_some());
    }
    assert_eq!(enqueued, 1);
    // Due again only for calibrations older than `since`: one created now is not.
    let since = chrono::Utc::now() - chrono::Duration::hours(24);
    assert_eq!(
        store
            .enqueue_calibration_unless_since(&new, Some(since))
            .await
            .unwrap(),
        None
    );
    let later = chrono::Utc::now() + chrono::Duration::hours(1);
    assert!(
        store
            .enqueue_calibration_unless_since(&new, Some(later))
            .await
            .unwrap()
            .is_some()
    );
}
