//! Samples stay with the machine that produced them.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

pub async fn samples_stay_with_their_runner(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let x = labels(&["x"]);
    let first = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    for k in 0..2 {
        store
            .upload_round(first.job.id, &first.lease, &round(k, 100.0, 110.0))
            .await
            .unwrap();
    }
    // r1 dies; its lease expires and r2 takes the job over, starting its own series.
    store.reap_expired_leases(much_later()).await.unwrap();
    let second = store.claim_job(r2.id, &x, LEASE).await.unwrap().unwrap();
    for k in 0..3 {
        store
            .upload_round(second.job.id, &second.lease, &round(k, 200.0, 190.0))
            .await
            .unwrap();
    }
    let series = store.comparison_samples(c.id).await.unwrap();
    assert_eq!(series.len(), 2, "one series per runner");
    let by = |id| series.iter().find(|s| s.runner_id == id).unwrap();
    let (s1, s2) = (by(r1.id), by(r2.id));
    assert_eq!((s1.runner_name.as_str(), s1.samples.len()), ("r1", 4));
    assert_eq!((s2.runner_name.as_str(), s2.samples.len()), ("r2", 6));
    assert!(
        s1.samples
            .iter()
            .all(|s| s.runner_id == r1.id && s.attempt == 1 && s.value < 150.0)
    );
    assert!(
        s2.samples
            .iter()
            .all(|s| s.runner_id == r2.id && s.attempt == 2 && s.value > 150.0)
    );
    let rounds: Vec<(i64, benchgate_api::Side, i64)> = s2
        .samples
        .iter()
        .map(|s| (s.round, s.side, s.position))
        .collect();
    use benchgate_api::Side::{Base, Head};
    assert_eq!(
        rounds,
        vec![
            (0, Base, 0),
            (0, Head, 1),
            (1, Head, 0),
            (1, Base, 1),
            (2, Base, 0),
            (2, Head, 1)
        ],
        "ordered by round, then position (ABBA)"
    );
    assert_eq!(s2.samples[0].benchmark, "parse");
    assert_eq!(s2.samples[0].unit, "ns");
}

/// The analysis after each upload reads only what it has not seen: each upload once, whichever
/// job wrote it, an upload of duplicates adds nothing, and a reader with no marks reads all.
pub async fn reading_since_marks_returns_each_upload_once(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, None, "h1", "x", jobs(2, 3)))
        .await
        .unwrap();
    let x = labels(&["x"]);
    let a = store.claim_job(r1.id, &x, LEASE).await.unwrap().unwrap();
    let b = store.claim_job(r2.id, &x, LEASE).await.unwrap().unwrap();
    let count = |s: &SamplesSince| s.series.iter().map(|r| r.samples.len()).sum::<usize>();

    let none = store
        .comparison_samples_since(c.id, &UploadMarks::new())
        .await
        .unwrap();
    assert_eq!((count(&none), none.marks.len()), (0, 0));

    store
        .upload_round(a.job.id, &a.lease, &round(0, 100.0, 110.0))
        .await
        .unwrap();
    let first = store
        .comparison_samples_since(c.id, &none.marks)
        .await
        .unwrap();
    assert_eq!(count(&first), 2);
    assert_eq!(first.series[0].runner_id, r1.id);
    assert_eq!(first.marks, UploadMarks::from([(a.job.id, 1)]));

    for k in 0..2 {
        store
            .upload_round(b.job.id, &b.lease, &round(k, 200.0, 190.0))
            .await
            .unwrap();
    }
    // A resent round: a new upload of the job, but no new sample.
    let resent = store
        .upload_round(a.job.id, &a.lease, &round(0, 1.0, 2.0))
        .await
        .unwrap();
    assert_eq!(resent.duplicates, 2);
    let second = store
        .comparison_samples_since(c.id, &first.marks)
        .await
        .unwrap();
    assert_eq!(count(&second), 4, "only r2's two rounds are new");
    assert!(second.series.iter().all(|s| s.runner_id == r2.id));
    assert_eq!(second.marks.get(&b.job.id), Some(&2));

    let again = store
        .comparison_samples_since(c.id, &second.marks)
        .await
        .unwrap();
    assert_eq!(count(&again), 0, "nothing is read twice");

    let cold = store
        .comparison_samples_since(c.id, &UploadMarks::new())
        .await
        .unwrap();
    let all = store.comparison_samples(c.id).await.unwrap();
    assert_eq!(count(&cold), 6);
    assert_eq!(cold.marks, second.marks);
    let mut cold_values: Vec<f64> = cold
        .series
        .iter()
        .flat_map(|s| s.samples.iter().map(|x| x.value))
        .collect();
    let mut all_values: Vec<f64> = all
        .iter()
        .flat_map(|s| s.samples.iter().map(|x| x.value))
        .collect();
    cold_values.sort_by(f64::total_cmp);
    all_values.sort_by(f64::total_cmp);
    assert_eq!(cold_values, all_values);
    assert!(
        !cold_values.contains(&1.0),
        "the resent round kept its first values"
    );
}

/// A round of a large suite is stored whole across several insert statements, a repeat inside
/// one round is a duplicate, and a resent round is all duplicates.
pub async fn a_large_round_is_stored_whole(store: Arc<dyn Store>) {
    let (c, claim) = one_claimed_job(&store).await;
    let template = round(0, 100.0, 110.0);
    let mut samples = Vec::new();
    for i in 0..1_250 {
        for s in &template.samples {
            let mut s = s.clone();
            s.measurement.benchmark = format!("bench/{i:04}");
            s.measurement.value += i as f64;
            samples.push(s);
        }
    }
    samples.push(samples[7].clone());
    let upload = RoundUpload { round: 0, samples };
    let stored = store
        .upload_round(claim.job.id, &claim.lease, &upload)
        .await
        .unwrap();
    assert_eq!(
        stored,
        UploadReceipt {
            inserted: 2_500,
            duplicates: 1
        }
    );
    let resent = store
        .upload_round(claim.job.id, &claim.lease, &upload)
        .await
        .unwrap();
    assert_eq!((resent.inserted, resent.duplicates), (0, 2_501));
    let series = store.comparison_samples(c.id).await.unwrap();
    assert_eq!(series[0].samples.len(), 2_500);
    let last = series[0]
        .samples
        .iter()
        .find(|s| s.benchmark == "bench/1249" && s.side == benchgate_api::Side::Head)
        .unwrap();
    assert_eq!(last.value, 110.0 + 1249.0);
}
