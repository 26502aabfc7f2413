//! Several runners on one comparison: runners of one hardware class give one set of rows,
//! stratified by runner; a runner of other hardware keeps its own, and the comment says so.
//! On SQLite, through the Store as agents would write it.

use std::sync::Arc;
use std::time::Duration;

use benchgate_api::{Measurement, Side, VerdictKind};
use benchgate_server::{analysis, report};
use benchgate_store::*;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(600);
const LABEL: &str = "x";

fn fingerprint(kernel: &str) -> serde_json::Value {
    json!({"cpu_model": "Intel(R) Xeon(R) Processor", "logical_cores": 2, "physical_cores": 2,
           "kernel": kernel, "governor": null, "boost": null, "memory_bytes": 25_276_502_016_u64,
           "load_average": [0.5, 0.6, 0.7], "isolation": "bwrap"})
}

struct Fixture {
    store: Arc<dyn Store>,
    repo: Repository,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("server.db").display());
    let store = connect(&url).await.expect("open sqlite");
    store.migrate().await.expect("migrate");
    let repo = store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: None,
            full_name: "acme/widgets".into(),
            clone_url: "https://example.invalid/acme/widgets.git".into(),
        })
        .await
        .unwrap();
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
    print["load_average"] = json!([name.len() as f64, 0.1, 0.2]);
    f.store.touch_runner(r.id, Some(&print)).await.unwrap();
    r.id
}

/// A deterministic wobble in [-1, 1].
fn wobble(k: u64) -> f64 {
    let x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) % 2001;
    x as f64 / 1000.0 - 1.0
}

/// `rounds` ABBA rounds of `parse`/`time`, head 10% slower, ±4% noise per run.
async fn measure(f: &Fixture, runner: RunnerId, rounds: i64, seed: u64) {
    let claim = f
        .store
        .claim_job(runner, &[LABEL.to_owned()], LEASE)
        .await
        .unwrap()
        .expect("a job to claim");
    for r in 0..rounds {
        let value = |side: Side| {
            let k = seed * 1000 + r as u64 * 2 + u64::from(side == Side::Head);
            let effect = if side == Side::Head { 1.10 } else { 1.0 };
            1000.0 * effect * (1.0 + 0.04 * wobble(k))
        };
        let samples = [Side::Base, Side::Head]
            .into_iter()
            .map(|side| SampleInput {
                side,
                position: i64::from((side == Side::Base) != (r % 2 == 0)),
                measurement: Measurement {
                    benchmark: "parse".into(),
                    metric: "time".into(),
                    unit: "ns".into(),
                    value: value(side),
                    lower: None,
                    upper: None,
                    direction: Default::default(),
                },
            })
            .collect();
        f.store
            .upload_round(
                claim.job.id,
                &claim.lease,
                &RoundUpload { round: r, samples },
            )
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
    let config = json!({"benchmark": {"run": "./bench", "format": "criterion", "rounds": rounds},
                        "gate": {"min_effect": 0.01}});
    f.store
        .create_comparison(&NewComparison {
            repository_id: f.repo.id,
            pr_number: Some(7),
            base_sha: "a".repeat(40),
            head_sha: "b".repeat(40),
            runner_label: LABEL.into(),
            config,
            planned_rounds: None,
            main: None,
            jobs: (0..jobs)
                .map(|_| NewJob {
                    rounds,
                    priority: Priority::NORMAL,
                    max_attempts: 3,
                    origin: None,
                })
                .collect(),
            notify: vec![],
        })
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
    analysis::analyze_comparison(&f.store, id).await.unwrap();

    let status = analysis::comparison_report(&f.store, id)
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
    analysis::analyze_comparison(&f.store, id).await.unwrap();
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
