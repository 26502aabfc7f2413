//! Dashboard data written through the Store, as the server and agents would write it: runners,
//! floors with history, comparisons with uploaded rounds and stored results, queued and running
//! jobs. `seed_small` feeds the page tests; `seed_bulk` the load measurement.

use std::time::Duration;

use benchgate_api::{AppliedRule, BenchmarkResult, Measurement, Side, VerdictKind};
use benchgate_store::{
    ClaimedJob, ComparisonId, FloorKey, JobOutcome, NewCalibration, NewComparison, NewJob,
    NewProfile, NewProfileJob, NewRepository, NoiseFloor, Priority, RepositoryId, RoundUpload,
    RunnerId, SampleInput, Store,
};
use chrono::{Duration as Age, Utc};
use serde_json::json;

/// A lease long enough that the reaper never touches a seeded running job during a test.
const LEASE: Duration = Duration::from_secs(3600);
pub const LABEL: &str = "linux-x86-quiet";

/// What `seed_small` created, for the assertions.
pub struct Seeded {
    /// A finished comparison with samples, results, a failed job and a PR.
    pub comparison_id: i64,
    /// A comparison still running (one job running, one queued).
    pub running_comparison_id: i64,
    pub busy_runner: String,
    pub idle_runner: String,
    pub offline_runner: String,
}

fn fingerprint() -> benchgate_api::MachineFingerprint {
    // What an agent sends, as JSON; this VM hides its boost.
    serde_json::from_value(
        json!({"cpu_model": "AMD EPYC 7B13", "logical_cores": 8, "physical_cores": 4,
           "kernel": "Linux 6.1.0-18-amd64", "governor": "performance", "boost": null,
           "memory_bytes": 25276502016u64, "load_average": [0.52, 0.61, 0.7],
           "isolation": "bwrap"}),
    )
    .unwrap()
}

async fn repository(store: &dyn Store, name: &str, github_id: i64) -> RepositoryId {
    store
        .upsert_repository(&NewRepository {
            github_id: Some(github_id),
            installation_id: None,
            full_name: name.into(),
            clone_url: format!("https://github.com/{name}.git"),
            forge: benchgate_store::model::Forge::GitHub,
        })
        .await
        .expect("repository")
        .id
}

/// `days` floors of one key, a day apart, their spread settling from `start` to `end`.
async fn floor_history(
    store: &dyn Store,
    key: FloorKey,
    days: i64,
    start: f64,
    end: f64,
    bias: f64,
) {
    let now = Utc::now();
    for day in 0..days {
        let t = day as f64 / (days - 1).max(1) as f64;
        store
            .update_noise_floor(&NoiseFloor {
                key: key.clone(),
                pairs: 10 * (day + 1),
                sessions: day + 1,
                within_spread: start + (end - start) * t,
                between_bias: bias,
                layout_bias: None,
                layout_lower: None,
                layout_upper: None,
                slow_mode: None,
                computed_at: now - Age::days(days - 1 - day) - Age::hours(1),
            })
            .await
            .expect("floor");
    }
}

fn comparison(repo: RepositoryId, pr: i64, jobs: usize, rounds: i64) -> NewComparison {
    let config = serde_json::from_value(
        json!({"benchmark": {"run": "./bench", "format": "criterion"},
                                               "gate": {"min_effect": 0.01}}),
    )
    .unwrap();
    NewComparison::new(
        repo,
        format!("{:08x}{pr:032x}", 0xa1b2c3d4_u64 + pr as u64),
        format!("{:08x}{pr:032x}", 0xfeedbeef_u64 + pr as u64),
        LABEL,
        config,
    )
    .pr(pr)
    .planned(20)
    .jobs(jobs, NewJob::rounds(rounds))
}

async fn claim(store: &dyn Store, runner: RunnerId) -> ClaimedJob {
    store
        .claim_job(runner, &[LABEL.to_string()], LEASE)
        .await
        .expect("claim")
        .expect("a job to claim")
}

/// One round: every benchmark's base and head, ABBA order, values from `value(benchmark, side)`.
fn round(
    round: i64,
    benchmarks: &[String],
    mut value: impl FnMut(usize, Side) -> f64,
) -> RoundUpload {
    let base_first = round % 2 == 0;
    let mut samples = Vec::with_capacity(benchmarks.len() * 2);
    for (i, b) in benchmarks.iter().enumerate() {
        for side in [Side::Base, Side::Head] {
            let first = (side == Side::Base) == base_first;
            samples.push(SampleInput {
                side,
                position: if first { 0 } else { 1 },
                measurement: Measurement {
                    benchmark: b.clone(),
                    metric: "time".into(),
                    unit: "ns".into(),
                    value: value(i, side),
                    lower: None,
                    upper: None,
                    direction: Default::default(),
                    run: None,
                },
            });
        }
    }
    RoundUpload { round, samples }
}

/// A deterministic wobble in [-1, 1] so seeded data looks measured but tests stay stable.
fn wobble(k: u64) -> f64 {
    let x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) % 2001;
    x as f64 / 1000.0 - 1.0
}

fn result(
    name: &str,
    n: usize,
    base: f64,
    change: f64,
    ci: [f64; 2],
    verdict: VerdictKind,
) -> BenchmarkResult {
    BenchmarkResult {
        rule: None,
        name: name.into(),
        metric: "time".into(),
        unit: "ns".into(),
        n,
        base_center: Some(base),
        head_center: Some(base * (1.0 + change / 100.0)),
        change_pct: Some(change),
        interval_pct: [Some(ci[0]), Some(ci[1])],
        fixed_interval_pct: [Some(ci[0] + 0.5), Some(ci[1] - 0.5)],
        verdict,
        practical: matches!(verdict, VerdictKind::Slower | VerdictKind::Faster),
        rounds_needed: None,
        e_value: 1234.0,
        gated: true,
        selected: true,
        hodges_lehmann: None,
        warnings: Vec::new(),
        direction: Default::default(),
        margin_pct: 1.0,
        layout_pct: None,
        tolerance_pct: None,
        reason: None,
        runners: Vec::new(),
        runs: None,
        modes: None,
        guard_runs: None,
    }
}

/// Three runners (busy, idle, never seen), floors with a week of history, one finished
/// comparison (PR 42: `parse/json` 5% slower, `render/html` unchanged, one failed job with a
/// log) and one running comparison (PR 43), plus a queued calibration job.
pub async fn seed_small(store: &dyn Store) -> Seeded {
    let busy = store
        .add_runner("quiet-1", &[LABEL.into()])
        .await
        .unwrap()
        .runner;
    let idle = store
        .add_runner("quiet-2", &[LABEL.into()])
        .await
        .unwrap()
        .runner;
    let offline = store
        .add_runner("old-box", &["linux-arm".into()])
        .await
        .unwrap()
        .runner;
    store
        .touch_runner(busy.id, Some(&fingerprint()))
        .await
        .unwrap();
    store.touch_runner(idle.id, None).await.unwrap();
    let repo = repository(store, "acme/widgets", 1001).await;
    for (benchmark, start, end) in [("parse/json", 0.021, 0.012), ("render/html", 0.009, 0.007)] {
        let key = FloorKey {
            runner_id: busy.id,
            repository_id: repo,
            benchmark: benchmark.into(),
            metric: "time".into(),
        };
        floor_history(store, key, 7, start, end, 0.002).await;
    }

    let benchmarks = vec!["parse/json".to_string(), "render/html".to_string()];
    let created = store
        .create_comparison(&comparison(repo, 42, 2, 12))
        .await
        .unwrap();
    let mut k = 0u64;
    let mut value = |i: usize, side: Side| {
        k += 1;
        let base = [1_000_000.0, 250_000.0][i];
        let change = if side == Side::Head && i == 0 {
            1.05
        } else {
            1.0
        };
        base * change * (1.0 + 0.004 * wobble(k))
    };
    let first = claim(store, busy.id).await;
    for r in 0..12 {
        let mut upload = round(r, &benchmarks, &mut value);
        if r == 7 {
            // One disturbed round: both sides slow, the head more so (an outlier pair).
            upload.samples[1].measurement.value *= 1.25;
        }
        store
            .upload_round(first.job.id, &first.lease, &upload)
            .await
            .unwrap();
    }
    let done = JobOutcome::Succeeded {
        log_tail: Some("build base: 41.2 s\nbuild head: 39.8 s\n12 rounds uploaded".into()),
    };
    store
        .complete_job(first.job.id, &first.lease, &done)
        .await
        .unwrap();
    let second = claim(store, busy.id).await;
    for r in 0..8 {
        let upload = round(r, &benchmarks, &mut value);
        store
            .upload_round(second.job.id, &second.lease, &upload)
            .await
            .unwrap();
    }
    let failed = JobOutcome::Failed {
        reason: "bench-suite exited with status 101".into(),
        log_tail:
            "round 9: running head\nthread 'main' panicked at src/bench.rs:88:5: <out of memory>"
                .into(),
    };
    store
        .complete_job(second.job.id, &second.lease, &failed)
        .await
        .unwrap();
    seed_profile(store, created.id).await;
    let results = [
        result(
            "parse/json",
            20,
            1_000_000.0,
            5.02,
            [3.41, 6.65],
            VerdictKind::Slower,
        ),
        result(
            "render/html",
            20,
            250_000.0,
            0.03,
            [-0.61, 0.66],
            VerdictKind::Equivalent,
        ),
    ];
    store
        .replace_comparison_results(created.id, busy.id, 1, &results)
        .await
        .unwrap();

    let running = store
        .create_comparison(&comparison(repo, 43, 2, 10))
        .await
        .unwrap();
    let job = claim(store, busy.id).await;
    for r in 0..3 {
        let upload = round(r, &benchmarks, &mut value);
        store
            .upload_round(job.job.id, &job.lease, &upload)
            .await
            .unwrap();
    }
    store
        .enqueue_calibration(&NewCalibration {
            runner_id: offline.id,
            repository_id: repo,
            sha: format!("{:08x}{:032x}", 0xa1b2c3d4_u64, 0),
            runner_label: "linux-arm".into(),
            config: serde_json::from_value(
                json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
            )
            .unwrap(),
            rounds: 10,
            priority: Priority::BACKGROUND,
            max_attempts: 3,
        })
        .await
        .unwrap();
    Seeded {
        comparison_id: created.id.0,
        running_comparison_id: running.id.0,
        busy_runner: busy.name,
        idle_runner: idle.name,
        offline_runner: offline.name,
    }
}

/// Enough comparisons for `samples` samples (25 benchmarks × 10 rounds × 2 sides each) on four
/// runners, each with 25 floors of 30 days' history; returns the id of the last comparison.
/// Progress goes to stderr every 100 comparisons.
#[allow(
    dead_code,
    reason = "examples/dashboard_load.rs seeds with it; no test does"
)]
pub async fn seed_bulk(store: &dyn Store, samples: usize) -> i64 {
    /// Benchmarks per comparison in the bulk data set.
    const BULK_BENCHMARKS: usize = 25;
    /// Rounds per comparison in the bulk data set.
    const BULK_ROUNDS: i64 = 10;
    let mut runners = Vec::new();
    for i in 0..4 {
        let r = store
            .add_runner(&format!("bulk-{i}"), &[LABEL.into()])
            .await
            .unwrap()
            .runner;
        store
            .touch_runner(r.id, Some(&fingerprint()))
            .await
            .unwrap();
        runners.push(r.id);
    }
    let repo = repository(store, "acme/big", 2002).await;
    let benchmarks: Vec<String> = (0..BULK_BENCHMARKS)
        .map(|i| format!("suite/case-{i:02}"))
        .collect();
    for &runner in &runners {
        for b in &benchmarks {
            let key = FloorKey {
                runner_id: runner,
                repository_id: repo,
                benchmark: b.clone(),
                metric: "time".into(),
            };
            floor_history(store, key, 30, 0.02, 0.01, 0.002).await;
        }
    }
    let per_comparison = BULK_BENCHMARKS * BULK_ROUNDS as usize * 2;
    let comparisons = samples.div_ceil(per_comparison);
    let mut k = 0u64;
    let mut last = 0;
    for c in 0..comparisons {
        let runner = runners[c % runners.len()];
        let created = store
            .create_comparison(&comparison(repo, 1000 + c as i64, 1, BULK_ROUNDS))
            .await
            .unwrap();
        let job = claim(store, runner).await;
        for r in 0..BULK_ROUNDS {
            let upload = round(r, &benchmarks, |i, side| {
                k += 1;
                let change = if side == Side::Head && i % 5 == 0 {
                    1.03
                } else {
                    1.0
                };
                (10_000.0 * (i + 1) as f64) * change * (1.0 + 0.01 * wobble(k))
            });
            store
                .upload_round(job.job.id, &job.lease, &upload)
                .await
                .unwrap();
        }
        let done = JobOutcome::Succeeded {
            log_tail: Some("ok".into()),
        };
        store
            .complete_job(job.job.id, &job.lease, &done)
            .await
            .unwrap();
        let results: Vec<BenchmarkResult> = benchmarks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let base = 10_000.0 * (i + 1) as f64;
                if i % 5 == 0 {
                    result(b, 10, base, 3.0, [1.2, 4.9], VerdictKind::Slower)
                } else {
                    result(b, 10, base, 0.1, [-0.9, 1.1], VerdictKind::Equivalent)
                }
            })
            .collect();
        store
            .replace_comparison_results(created.id, runner, 1, &results)
            .await
            .unwrap();
        last = created.id.0;
        if (c + 1) % 100 == 0 {
            eprintln!("seeded {} of {comparisons} comparisons", c + 1);
        }
    }
    last
}

/// A second repository with one queued comparison (PR 7, no results), for the list filters.
pub async fn seed_second_repository(store: &dyn Store) -> i64 {
    let repo = repository(store, "acme/gears", 1002).await;
    store
        .create_comparison(&comparison(repo, 7, 1, 10))
        .await
        .unwrap()
        .id
        .0
}

/// After `seed_small`: a comparison (PR 44 on quiet-1) whose stored results are in file order,
/// not report order: an unchanged row, an undecided one, a small regression, an improvement, a
/// large regression, and a regression a rule ignores. Returns its id.
pub async fn seed_file_ordered_suite(store: &dyn Store) -> i64 {
    let runner = store.runner_by_name("quiet-1").await.unwrap().unwrap();
    let repo = repository(store, "acme/widgets", 1001).await;
    let mut new = comparison(repo, 44, 1, 10);
    // The description claims what the rows answer: `hash/fnv` confirmed, `sort/large` opposite.
    new.config.github = Some(
        serde_json::from_value(json!({
            "body": "Faster hashing: `hash/fnv` is 4% faster, and `sort/large` 10% faster too."
        }))
        .unwrap(),
    );
    let created = store.create_comparison(&new).await.unwrap();
    let mut undecided = result(
        "fmt/int",
        12,
        80_000.0,
        1.5,
        [-0.8, 3.9],
        VerdictKind::NoResultYet,
    );
    undecided.rounds_needed = Some(30);
    let mut ignored = result(
        "bench/setup",
        12,
        5_000_000.0,
        20.0,
        [15.0, 25.0],
        VerdictKind::Slower,
    );
    ignored.rule = Some(AppliedRule {
        number: 1,
        pattern: "bench/*".into(),
        fail_on: None,
        not_gated: false,
        ignored: true,
    });
    let results = [
        result(
            "fmt/float",
            12,
            120_000.0,
            0.2,
            [-0.5, 0.9],
            VerdictKind::Equivalent,
        ),
        undecided,
        result(
            "sort/small",
            12,
            40_000.0,
            2.1,
            [1.2, 3.0],
            VerdictKind::Slower,
        ),
        result(
            "hash/fnv",
            12,
            9_000.0,
            -4.0,
            [-5.1, -2.9],
            VerdictKind::Faster,
        ),
        ignored,
        result(
            "sort/large",
            12,
            2_000_000.0,
            9.0,
            [7.4, 10.6],
            VerdictKind::Slower,
        ),
    ];
    store
        .replace_comparison_results(created.id, runner.id, 1, &results)
        .await
        .unwrap();
    created.id.0
}

/// The default branch's history of `acme/widgets`: four steps on runner `hist-1` (its own
/// label, so no other seeded job is claimed), the third a 12% slowdown, each with 12 rounds of
/// `parse/json` uploaded and done. Returns the repository's name.
pub async fn seed_main_history(store: &dyn Store) -> &'static str {
    use benchgate_store::MainKind;
    const HISTORY_LABEL: &str = "hist";
    let repo = repository(store, "acme/widgets", 1001).await;
    let runner = store
        .add_runner("hist-1", &[HISTORY_LABEL.into()])
        .await
        .unwrap()
        .runner;
    let commits: Vec<String> = (0..5)
        .map(|i| format!("c0ffee{i:02}{}", "0".repeat(32)))
        .collect();
    let benchmarks = vec!["parse/json".to_string()];
    for (k, pair) in commits.windows(2).enumerate() {
        let slower = if k == 2 { 1.12 } else { 1.0 };
        store
            .create_comparison(&{
                let mut step = comparison(repo, 0, 1, 12)
                    .pr(None)
                    .between(&pair[0], &pair[1])
                    .main(MainKind::Step, "main", vec![pair[1].clone()]);
                step.runner_label = HISTORY_LABEL.into();
                step
            })
            .await
            .unwrap();
        let job = store
            .claim_job(runner.id, &[HISTORY_LABEL.to_string()], LEASE)
            .await
            .unwrap()
            .expect("the step's job");
        for r in 0..12 {
            let upload = round(r, &benchmarks, |_, side| {
                let w = 1.0 + 0.01 * wobble((k * 100 + r as usize) as u64 + side as u64);
                match side {
                    Side::Base => 1_000_000.0 * w,
                    Side::Head => 1_000_000.0 * w * slower,
                }
            });
            store
                .upload_round(job.job.id, &job.lease, &upload)
                .await
                .unwrap();
        }
        store
            .complete_job(
                job.job.id,
                &job.lease,
                &JobOutcome::Succeeded { log_tail: None },
            )
            .await
            .unwrap();
    }
    "acme/widgets"
}

/// A profile of comparison `id` with made-up stacks (for rendering; the format's real inputs
/// are tested in crates/profile): head spends a third of its samples in `slow_path`.
async fn seed_profile(store: &dyn Store, id: ComparisonId) {
    let job = NewProfileJob {
        request: benchgate_api::agent::ProfileRequest {
            runs: 3,
            rows: vec!["parse/json time".into()],
            requested_by: "verdict".into(),
        },
        priority: Priority::NORMAL,
        max_attempts: 2,
        origin: format!("seed:profile:{id}"),
    };
    store.request_profile(id, &job).await.unwrap().unwrap();
    let busy = store.runner_by_name("quiet-1").await.unwrap().unwrap();
    let claimed = claim(store, busy.id).await;
    assert!(
        claimed.job.profile.is_some(),
        "the profile job is the one queued"
    );
    let stacks = NewProfile {
        event: Some("cpu-clock".into()),
        unavailable: None,
        runs: 3,
        base_folded: "bench;main;parse_json 600\nbench;main;render_html 200\n".into(),
        head_folded: "bench;main;parse_json 600\nbench;main;parse_json;slow_path 300\nbench;main;render_html 200\n".into(),
    };
    store
        .record_profile(claimed.job.id, &claimed.lease, &stacks)
        .await
        .unwrap();
    store
        .complete_job(
            claimed.job.id,
            &claimed.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
}
