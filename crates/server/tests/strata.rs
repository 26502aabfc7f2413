//! Several runners on one comparison: runners of one hardware class give one set of rows,
//! stratified by runner; a runner of other hardware keeps its own, and the comment says so.
//! On SQLite, through the Store as agents would write it.

use std::sync::Arc;
use std::time::Duration;

use benchgate_api::{Measurement, Side, VerdictKind};
use benchgate_server::{comparison_analysis, report};
use benchgate_store::*;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(600);
const LABEL: &str = "x";

fn fingerprint(kernel: &str) -> benchgate_api::MachineFingerprint {
    serde_json::from_value(
        json!({"cpu_model": "Intel(R) Xeon(R) Processor", "logical_cores": 2, "physical_cores": 2,
           "kernel": kernel, "governor": null, "boost": null, "memory_bytes": 25_276_502_016_u64,
           "load_average": [0.5, 0.6, 0.7], "isolation": "bwrap"}),
    )
    .unwrap()
}

struct Fixture {
    store: Arc<dyn Store>,
    repo: Repository,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let (store, repo, dir, _) = crate::sqlite_with_repository().await;
    Fixture {
        store,
        repo,
        _dir: dir,
    }
}

async fn runner(f: &Fixture, name: &str, kernel: &str) -> RunnerId {
    let r = f
        .store
        .add_runner(name, &[LABEL.to_owned()])
        .await
        .unwrap()
        .runner;
    // The load differs from runner to runner; it is not part of the hardware class.
    let mut print = fingerprint(kernel);
    print.load_average = [name.len() as f64, 0.1, 0.2];
    f.store.touch_runner(r.id, Some(&print)).await.unwrap();
    r.id
}

/// A deterministic wobble in [-1, 1].
fn wobble(k: u64) -> f64 {
    let x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) % 2001;
    x as f64 / 1000.0 - 1.0
}

/// Round `r` of `parse`/`time`, head 10% slower, ±4% noise per run.
fn round_of(r: i64, seed: u64) -> RoundUpload {
    RoundUpload {
        round: r,
        samples: [Side::Base, Side::Head]
            .into_iter()
            .map(|side| sample(r, seed, side, "time"))
            .collect(),
    }
}

/// One side's value of `parse`/`metric` in round `r`.
fn sample(r: i64, seed: u64, side: Side, metric: &str) -> SampleInput {
    sample_of(r, seed, side, metric, 1.10, 0.04)
}

/// The same with head `effect` times base and `noise` per run.
fn sample_of(r: i64, seed: u64, side: Side, metric: &str, effect: f64, noise: f64) -> SampleInput {
    let k = seed * 1000 + r as u64 * 2 + u64::from(side == Side::Head);
    let effect = if side == Side::Head { effect } else { 1.0 };
    SampleInput {
        side,
        position: i64::from((side == Side::Base) != (r % 2 == 0)),
        measurement: Measurement {
            benchmark: "parse".into(),
            metric: metric.into(),
            unit: "ns".into(),
            value: 1000.0 * effect * (1.0 + noise * wobble(k)),
            lower: None,
            upper: None,
            direction: Default::default(),
            run: None,
        },
    }
}

/// `rounds` ABBA rounds of `parse`/`time` on one claimed job, then completes it.
async fn measure(f: &Fixture, runner: RunnerId, rounds: i64, seed: u64) {
    let claim = f
        .store
        .claim_job(runner, &[LABEL.to_owned()], LEASE)
        .await
        .unwrap()
        .expect("a job to claim");
    for r in 0..rounds {
        f.store
            .upload_round(claim.job.id, &claim.lease, &round_of(r, seed))
            .await
            .unwrap();
    }
    f.store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
}

async fn comparison(f: &Fixture, jobs: usize, rounds: i64) -> ComparisonId {
    let config = serde_json::from_value(
        json!({"benchmark": {"run": "./bench", "format": "criterion", "rounds": rounds},
                        "gate": {"min_effect": 0.01}}),
    )
    .unwrap();
    f.store
        .create_comparison(
            &NewComparison::new(f.repo.id, "a".repeat(40), "b".repeat(40), LABEL, config)
                .pr(7)
                .jobs(jobs, NewJob::rounds(rounds)),
        )
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn one_hardware_class_is_one_set_of_rows_and_other_hardware_stays_apart() {
    let f = fixture().await;
    let alpha = runner(&f, "alpha", "Linux 6.18.44").await;
    let beta = runner(&f, "beta", "Linux 6.18.44").await;
    let gamma = runner(&f, "gamma", "Linux 6.1.0").await;
    let id = comparison(&f, 3, 8).await;
    measure(&f, alpha, 8, 1).await;
    measure(&f, beta, 8, 2).await;
    measure(&f, gamma, 8, 3).await;
    comparison_analysis::analyze_comparison(&f.store, id)
        .await
        .unwrap();

    let status = comparison_analysis::comparison_report(&f.store, id)
        .await
        .unwrap()
        .unwrap();
    let names: Vec<&str> = status.runners.iter().map(|r| r.runner.as_str()).collect();
    assert_eq!(names, ["alpha + beta", "gamma"], "{status:#?}");
    assert!(status.runners[0].headline);
    let combined = &status.runners[0].report.benchmarks[0];
    assert_eq!(combined.n, 16, "{combined:?}");
    assert_eq!(combined.runners, ["alpha", "beta"]);
    assert_eq!(combined.verdict, VerdictKind::Slower, "{combined:?}");
    let alone = &status.runners[1].report.benchmarks[0];
    assert_eq!(alone.n, 8);
    assert!(alone.runners.is_empty());
    // Every pair stays on its machine: the combined interval is narrower than gamma's alone.
    let width = |r: &benchgate_api::BenchmarkResult| {
        r.interval_pct[1].unwrap_or(f64::INFINITY) - r.interval_pct[0].unwrap_or(f64::NEG_INFINITY)
    };
    assert!(width(combined) < width(alone), "{combined:?} vs {alone:?}");
    // The gate's answer for a job of beta's is the group's rows, stored under alpha: a slower
    // row fails the gate, so beta's job may stop too.
    for name in ["alpha", "beta"] {
        let runner = f.store.runner_by_name(name).await.unwrap().unwrap();
        let progress = comparison_analysis::gate_progress(&f.store, id, &runner)
            .await
            .unwrap();
        assert!(progress.answered, "{name}: {progress:?}");
    }

    let loaded = report::load(f.store.as_ref(), id, "https://bench.example/c".into())
        .await
        .unwrap()
        .unwrap();
    let runner_info = loaded.input.runner.unwrap();
    assert_eq!(runner_info.name, "alpha + beta");
    assert!(
        runner_info
            .note
            .unwrap()
            .contains("2 runners of one hardware class"),
        "the comment says they were combined"
    );
}

#[tokio::test]
async fn a_runner_of_other_hardware_is_named_in_the_comment() {
    let f = fixture().await;
    let alpha = runner(&f, "alpha", "Linux 6.18.44").await;
    let gamma = runner(&f, "gamma", "Linux 6.1.0").await;
    let id = comparison(&f, 2, 10).await;
    measure(&f, alpha, 10, 1).await;
    measure(&f, gamma, 6, 3).await;
    comparison_analysis::analyze_comparison(&f.store, id)
        .await
        .unwrap();
    let loaded = report::load(f.store.as_ref(), id, "https://bench.example/c".into())
        .await
        .unwrap()
        .unwrap();
    let runner_info = loaded.input.runner.clone().unwrap();
    assert_eq!(runner_info.name, "alpha");
    let note = runner_info.note.unwrap();
    assert!(
        note.contains("also measured on gamma") && note.contains("different hardware"),
        "{note}"
    );
    let body = report::render_comment(&loaded.input);
    assert!(body.contains("also measured on gamma"), "{body}");
}

/// The analysis after each upload keeps what it read and reads only the new upload; after
/// every upload of three runners (two combined), its stored rows equal a full re-read's, also
/// when a small budget makes it drop a comparison and read it whole again.
#[tokio::test]
async fn kept_samples_give_the_same_rows_as_reading_everything() {
    let f = fixture().await;
    let ids = [
        runner(&f, "alpha", "Linux 6.18.44").await,
        runner(&f, "beta", "Linux 6.18.44").await,
        runner(&f, "gamma", "Linux 6.1.0").await,
    ];
    let first = comparison(&f, 3, 6).await;
    let claims = {
        let mut claims = Vec::new();
        for id in ids {
            let claim = f
                .store
                .claim_job(id, &[LABEL.to_owned()], LEASE)
                .await
                .unwrap();
            claims.push(claim.expect("a job to claim"));
        }
        claims
    };
    let other = comparison(&f, 1, 6).await;
    let roomy = benchgate_server::series_cache::SeriesCache::default();
    // Room for one comparison's samples at a time, so every switch drops the other.
    let tight = benchgate_server::series_cache::SeriesCache::new(0);
    let rows = |id| {
        let store = f.store.clone();
        async move {
            let mut rows: Vec<_> = store
                .comparison_results(id)
                .await
                .unwrap()
                .into_iter()
                .map(|r| (r.runner_id, r.result))
                .collect();
            rows.sort_by(|a, b| (a.0, &a.1.name, &a.1.metric).cmp(&(b.0, &b.1.name, &b.1.metric)));
            rows
        }
    };
    let mut read_by_roomy = Vec::new();
    for r in 0..6 {
        for (k, claim) in claims.iter().enumerate() {
            // gamma resends its previous round too: the resent samples count once.
            if k == 2 && r > 0 {
                let resent = round_of(r - 1, k as u64);
                f.store
                    .upload_round(claim.job.id, &claim.lease, &resent)
                    .await
                    .unwrap();
            }
            // alpha also reports instructions for head only: a row "only in head".
            let mut upload = round_of(r, k as u64);
            if k == 0 {
                upload
                    .samples
                    .push(sample(r, 9, Side::Head, "instructions"));
            }
            f.store
                .upload_round(claim.job.id, &claim.lease, &upload)
                .await
                .unwrap();
            let kept = comparison_analysis::analyze_comparison_cached(&f.store, &roomy, first)
                .await
                .unwrap();
            read_by_roomy.push(kept.read_samples);
            let cached = rows(first).await;
            comparison_analysis::analyze_comparison_cached(&f.store, &tight, other)
                .await
                .unwrap();
            let after_drop =
                comparison_analysis::analyze_comparison_cached(&f.store, &tight, first)
                    .await
                    .unwrap();
            assert_eq!(
                after_drop.read_samples, after_drop.samples,
                "read whole again"
            );
            assert_eq!(rows(first).await, cached);
            let full = comparison_analysis::analyze_comparison(&f.store, first)
                .await
                .unwrap();
            assert_eq!(rows(first).await, cached, "round {r}, runner {k}");
            assert_eq!((kept.samples, kept.rows), (full.samples, full.rows));
        }
    }
    let expected: Vec<usize> = (0..18).map(|i| if i % 3 == 0 { 3 } else { 2 }).collect();
    assert_eq!(
        read_by_roomy, expected,
        "each analysis read its own upload only"
    );
    let last = rows(first).await;
    let summary: Vec<(&str, usize, VerdictKind)> = last
        .iter()
        .map(|(_, r)| (r.metric.as_str(), r.n, r.verdict))
        .collect();
    assert_eq!(summary.len(), 3, "{last:?}");
    assert_eq!(summary[0].0, "instructions");
    assert_eq!(summary[0].2, VerdictKind::OnlyInHead);
    assert_eq!(
        (summary[1].0, summary[1].1),
        ("time", 12),
        "alpha + beta combined"
    );
    assert_eq!((summary[2].0, summary[2].1), ("time", 6), "gamma alone");
}

/// Uploads of one comparison that arrive while it is being analysed wait, and the first
/// analysis after them serves them all; one asked for after it stored is analysed again.
#[tokio::test]
async fn uploads_waiting_on_an_analysis_are_served_by_the_next_one() {
    let f = fixture().await;
    let alpha = runner(&f, "alpha", "Linux 6.18.44").await;
    let id = comparison(&f, 1, 4).await;
    measure(&f, alpha, 4, 1).await;
    let cache = Arc::new(benchgate_server::series_cache::SeriesCache::default());
    let held = cache.get(id);
    let busy = held.lock().await;
    let waiting: Vec<_> = (0..3)
        .map(|_| {
            let (store, cache) = (f.store.clone(), cache.clone());
            tokio::spawn(async move {
                comparison_analysis::analyze_comparison_cached(&store, &cache, id)
                    .await
                    .unwrap()
            })
        })
        .collect();
    // On this single-threaded runtime each task runs up to the lock held above.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    drop(busy);
    let mut done = Vec::new();
    for w in waiting {
        done.push(w.await.unwrap());
    }
    let analysed = done.iter().filter(|d| !d.covered).count();
    assert_eq!(
        analysed, 1,
        "one analysis for three waiting uploads: {done:?}"
    );
    let rows = f.store.comparison_results(id).await.unwrap();
    assert_eq!(rows[0].result.n, 4);
    let later = comparison_analysis::analyze_comparison_cached(&f.store, &cache, id)
        .await
        .unwrap();
    assert!(!later.covered, "{later:?}");
}

/// A row the last analysis gave up on ("below this runner's resolution") stays so when the
/// next upload's forecast dips under the cap again: the comment is rewritten after every
/// upload and must not flip. The interval deciding the row since would show instead.
#[tokio::test]
async fn a_row_given_up_on_stays_below_resolution_from_one_analysis_to_the_next() {
    let f = fixture().await;
    let alpha = runner(&f, "alpha", "Linux 6.18.44").await;
    let config = json!({"benchmark": {"run": "./bench", "format": "criterion", "rounds": 12},
                        "gate": {"min_effect": 0.01, "tolerance": null}});
    let mut ids = Vec::new();
    for _ in 0..2 {
        let id = f
            .store
            .create_comparison(
                &NewComparison::new(
                    f.repo.id,
                    "a".repeat(40),
                    "b".repeat(40),
                    LABEL,
                    serde_json::from_value(config.clone()).unwrap(),
                )
                .jobs(1, NewJob::rounds(12)),
            )
            .await
            .unwrap()
            .id;
        let claim = f
            .store
            .claim_job(alpha, &[LABEL.to_owned()], LEASE)
            .await
            .unwrap()
            .expect("a job to claim");
        for r in 0..12 {
            let round = RoundUpload {
                round: r,
                samples: [Side::Base, Side::Head]
                    .into_iter()
                    .map(|side| sample_of(r, 5, side, "time", 1.002, NOISE))
                    .collect(),
            };
            f.store
                .upload_round(claim.job.id, &claim.lease, &round)
                .await
                .unwrap();
        }
        comparison_analysis::analyze_comparison(&f.store, id)
            .await
            .unwrap();
        ids.push(id);
    }
    let row = |id: ComparisonId| {
        let store = f.store.clone();
        async move {
            let stored = store.comparison_results(id).await.unwrap();
            stored[0].result.clone()
        }
    };
    let first = row(ids[0]).await;
    assert_eq!(first.verdict, VerdictKind::NoResultYet, "{first:?}");
    assert!(first.rounds_needed.is_some());

    // The analysis before had given up on the row (as one a round earlier can), from the
    // same 24 samples.
    let mut given_up = first.clone();
    given_up.verdict = VerdictKind::BelowResolution;
    given_up.rounds_needed = None;
    assert!(
        f.store
            .replace_comparison_results(ids[1], alpha, 24, &[given_up])
            .await
            .unwrap()
    );
    comparison_analysis::analyze_comparison(&f.store, ids[1])
        .await
        .unwrap();
    comparison_analysis::analyze_comparison(&f.store, ids[0])
        .await
        .unwrap();
    let held = row(ids[1]).await;
    assert_eq!(held.verdict, VerdictKind::BelowResolution, "{held:?}");
    assert_eq!(held.rounds_needed, None);
    assert_eq!(
        row(ids[0]).await.verdict,
        VerdictKind::NoResultYet,
        "nothing given up, nothing held"
    );
}

const NOISE: f64 = 0.01;
