//! A runner's audit on a real SQLite file with modelled workloads (no timing is asserted):
//! canaries start only on an idle runner and yield to waiting work; rates match a hand count;
//! a runner whose A/A canaries are biased is flagged and a fair one is not; forecasts are kept
//! and scored; and a layout floor turns a layout-only shift into "no change (layout)" while a
//! real 10% change still fails.

use std::sync::Arc;
use std::time::Duration;

use benchgate_api::agent::{CanarySpec, LayoutSalts, PlantedBy, StoredComparisonConfig};
use benchgate_api::{Measurement, Side, VerdictKind};
use benchgate_server::audit::{self, audit_of};
use benchgate_server::{AppState, ServeArgs, calibration, comparison_analysis};
use benchgate_stats::audit::clopper_pearson;
use benchgate_store::*;
use clap::Parser;

const LEASE: Duration = Duration::from_secs(60);

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

struct Fixture {
    app: AppState,
    store: Arc<dyn Store>,
    repo: Repository,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let (store, repo, dir, url) = crate::sqlite_with_repository().await;
    let serve = Cli::parse_from([
        "serve",
        "--database-url",
        &url,
        "--canary-every",
        "x=1h,*=off",
        "--canary-planted",
        "5",
    ])
    .serve;
    Fixture {
        app: AppState::new(serve, store.clone()),
        store,
        repo,
        _dir: dir,
    }
}

/// The default gate's 5% tolerance without the tail guard: these comparisons have 20 rounds,
/// and the audit scores claims, not passes.
fn config() -> StoredComparisonConfig {
    serde_json::from_value(serde_json::json!({
        "benchmark": {"run": "./bench", "format": "criterion"},
        "gate": {"tolerance": 0.05}
    }))
    .unwrap()
}

async fn runner(store: &Arc<dyn Store>, name: &str) -> Runner {
    store
        .add_runner(name, &["x".to_owned()])
        .await
        .unwrap()
        .runner
}

fn new_comparison(f: &Fixture, pr: Option<i64>, config: StoredComparisonConfig) -> NewComparison {
    let head = if pr.is_some() { "h" } else { "b" }.repeat(40);
    NewComparison::new(f.repo.id, "b".repeat(40), head, "x", config)
        .pr(pr)
        .planned(20)
        .jobs(1, NewJob::rounds(20))
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

/// A seeded stream of standard normals (xorshift + Box–Muller), so every run is the same.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Claims the next job `runner` may take and uploads `rounds` rounds of base ≈ 1000 ns and
/// head ≈ 1000·`factor` ns, each with 0.5% log noise; completes it.
async fn run_job(
    store: &Arc<dyn Store>,
    runner: &Runner,
    rounds: i64,
    factor: f64,
    noise: &mut Noise,
) -> Job {
    let claim = store
        .claim_job(runner.id, &["x".to_owned()], LEASE)
        .await
        .unwrap()
        .expect("a job for this runner");
    for k in 0..rounds {
        let base = 1000.0 * (0.005 * noise.normal()).exp();
        let head = 1000.0 * factor * (0.005 * noise.normal()).exp();
        store
            .upload_round(claim.job.id, &claim.lease, &round(k, base, head))
            .await
            .unwrap();
    }
    store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    claim.job
}

#[tokio::test]
async fn canaries_start_only_on_an_idle_runner_and_yield_to_waiting_work() {
    let f = fixture().await;
    let r1 = runner(&f.store, "r1").await;
    let pr = f
        .store
        .create_comparison(&new_comparison(&f, Some(7), config()))
        .await
        .unwrap();
    let now = chrono::Utc::now();
    // A PR's job waits: no canary.
    audit::tick(&f.app, now).await.unwrap();
    assert!(f.store.runner_canaries(r1.id, 10).await.unwrap().is_empty());

    let mut noise = Noise(7);
    let job = run_job(&f.store, &r1, 3, 1.0, &mut noise).await;
    assert_eq!(job.comparison_id, Some(pr.id));
    // Idle now: the first canary is an A/A one of the PR's base, at the lowest priority.
    audit::tick(&f.app, now).await.unwrap();
    let canaries = f.store.runner_canaries(r1.id, 10).await.unwrap();
    assert_eq!(canaries.len(), 1);
    let canary = &canaries[0];
    assert_eq!(
        (canary.base_sha.as_str(), canary.head_sha.as_str()),
        (pr_base(), pr_base())
    );
    assert_eq!(canary.pr_number, None);
    let spec = canary.config.canary.clone().expect("a canary");
    assert_eq!((spec.runner_id, spec.planted_pct), (r1.id.0, None));
    // Queued and not due again: a second pass adds nothing.
    audit::tick(&f.app, now).await.unwrap();
    assert_eq!(f.store.runner_canaries(r1.id, 10).await.unwrap().len(), 1);

    // The runner runs it; a PR push arrives meanwhile: the canary yields.
    let claim = f
        .store
        .claim_job(r1.id, &["x".to_owned()], LEASE)
        .await
        .unwrap()
        .expect("the canary");
    assert_eq!(claim.job.comparison_id, Some(canary.id));
    assert_eq!(claim.job.priority, audit::CANARY_PRIORITY);
    let push = f
        .store
        .create_comparison(
            &new_comparison(&f, Some(8), config()).between("b".repeat(40), "c".repeat(40)),
        )
        .await
        .unwrap();
    audit::tick(&f.app, now).await.unwrap();
    let beat = f
        .store
        .heartbeat(claim.job.id, &claim.lease, LEASE)
        .await
        .unwrap();
    assert!(
        beat.cancel_requested,
        "the agent learns at its next heartbeat"
    );
    let yielded = f.store.comparison(canary.id).await.unwrap().unwrap();
    assert_eq!(yielded.state, ComparisonState::Cancelled);
    // The PR's job is what the runner takes next.
    f.store
        .complete_job(
            claim.job.id,
            &claim.lease,
            &JobOutcome::Succeeded { log_tail: None },
        )
        .await
        .unwrap();
    let next = run_job(&f.store, &r1, 3, 1.0, &mut noise).await;
    assert_eq!(next.comparison_id, Some(push.id));

    // Due again an hour later; the cycle goes on with the second A/A one.
    audit::tick(&f.app, now).await.unwrap();
    assert_eq!(f.store.runner_canaries(r1.id, 10).await.unwrap().len(), 1);
    audit::tick(&f.app, now + chrono::TimeDelta::minutes(61))
        .await
        .unwrap();
    let canaries = f.store.runner_canaries(r1.id, 10).await.unwrap();
    assert_eq!(canaries.len(), 2);
    assert_eq!(
        canaries[0].config.canary.as_ref().unwrap().planted_pct,
        None
    );
}

fn pr_base() -> &'static str {
    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
}

fn canary_result(id: i64, planted: Option<f64>, verdict: VerdictKind, rounds: i64) -> CanaryResult {
    CanaryResult {
        comparison_id: ComparisonId(id),
        runner_id: RunnerId(1),
        benchmark: "parse".into(),
        metric: "time".into(),
        planted_pct: planted,
        verdict,
        rounds,
        minutes: Some(rounds as f64 / 2.0),
        forecast: Some((2, 6)),
        recorded_at: chrono::DateTime::from_timestamp(1_800_000_000 + id, 0).unwrap(),
    }
}

#[test]
fn the_audit_rates_match_a_hand_count() {
    use VerdictKind::*;
    let mut results = Vec::new();
    // 40 A/A rows: 2 slower, 1 faster (canaries 0, 13 and 26, apart), 30 no change, 7
    // undecided.
    for i in 0..40 {
        let v = match i {
            0 | 13 => Slower,
            26 => Faster,
            33.. => NoResultYet,
            _ => Equivalent,
        };
        results.push(canary_result(i, None, v, 8));
    }
    // 20 rows planted +5%: 15 slower (at 4..=18 rounds), 1 faster, 4 undecided.
    for i in 0..20 {
        let v = match i {
            0..=14 => Slower,
            15 => Faster,
            _ => NoResultYet,
        };
        results.push(canary_result(100 + i, Some(5.0), v, 4 + i));
    }
    let runner = Runner {
        id: RunnerId(1),
        name: "r1".into(),
        labels: vec!["x".into()],
        fingerprint: None,
        created_at: chrono::Utc::now(),
        last_seen_at: None,
        revoked_at: None,
        audit_since: None,
    };
    let a = audit_of(&runner, &results, &[], &Default::default(), None);
    assert_eq!((a.aa.hits, a.aa.trials), (3, 40));
    let (lo, hi) = clopper_pearson(3, 40, 0.05);
    assert_eq!((a.aa.lower_pct, a.aa.upper_pct), (100.0 * lo, 100.0 * hi));
    assert_eq!(a.aa.rate_pct, Some(7.5));
    // 3 of 40, apart, is consistent with α: the flag's evidence never reached 20.
    assert!(!a.flagged, "{:?}", a.flag);
    assert_eq!(a.flag.fired_at_canary, None);
    assert_eq!(a.planted.len(), 1);
    let p = &a.planted[0];
    assert_eq!((p.found.hits, p.found.trials, p.wrong_way), (15, 20, 1));
    // Found at 4, 5, …, 18 rounds: the median is 11.
    assert_eq!(p.median_rounds, Some(11.0));
    assert_eq!(p.median_minutes, Some(5.5));
    assert_eq!(a.canaries, 60);
    // Forecasts of decided rows: 6 said at 2 rounds. A/A decided at 8 (took 6, within), planted
    // at 4..=18 (took 2..=16, within for 5..=7 of those: rounds 7, 8, 9) and the faster one at
    // 19 (took 17).
    // The four planted rows never decided ran 18–21 rounds past a forecast of 6: they took
    // longer and count, never as right. The 7 undecided A/A rows ran 6 past it, within the
    // horizon of 7.8: not scored yet.
    let decided = 33 + 16;
    assert_eq!(a.forecasts.scored, decided + 4);
    assert_eq!(a.forecasts.took_longer_undecided, 4);
    assert_eq!(a.forecasts.within, 33 + 3);
    // After a recalibration by hand only later A/A rows count for the flag.
    let since = Runner {
        audit_since: Some(chrono::DateTime::from_timestamp(1_800_000_030, 0).unwrap()),
        ..runner
    };
    let b = audit_of(&since, &results, &[], &Default::default(), None);
    assert_eq!(
        (
            b.aa_since_recalibration.hits,
            b.aa_since_recalibration.trials
        ),
        (0, 10)
    );
    assert_eq!((b.aa.hits, b.aa.trials), (3, 40));
}

/// Creates an A/A canary on `runner`, runs it with `bias` on head, and scores it.
async fn canary_with_bias(
    f: &Fixture,
    runner: &Runner,
    bias: f64,
    noise: &mut Noise,
) -> Vec<CanaryResult> {
    let mut config = config();
    config.canary = Some(CanarySpec {
        runner_id: runner.id.0,
        planted_pct: None,
        planted_by: PlantedBy::Scale,
    });
    let c = f
        .store
        .create_comparison(&new_comparison(f, None, config))
        .await
        .unwrap();
    run_job(&f.store, runner, 12, bias, noise).await;
    audit::after_job(&f.store, c.id).await;
    f.store
        .canary_results(runner.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.comparison_id == c.id)
        .collect()
}

#[tokio::test]
async fn a_runner_whose_aa_canaries_are_biased_is_flagged_and_a_fair_one_is_not() {
    let f = fixture().await;
    let fair = runner(&f.store, "fair").await;
    let biased = runner(&f.store, "biased").await;
    let mut noise = Noise(42);
    for _ in 0..12 {
        // The biased runner's head side always runs 3% slower (a modelled machine fault).
        let rows = canary_with_bias(&f, &biased, 1.03, &mut noise).await;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].verdict, VerdictKind::Slower, "{rows:?}");
        let rows = canary_with_bias(&f, &fair, 1.0, &mut noise).await;
        assert_eq!(rows.len(), 1);
    }
    let b = audit::runner_audit(f.store.as_ref(), &biased)
        .await
        .unwrap();
    assert_eq!((b.aa.hits, b.aa.trials), (12, 12));
    assert!(b.flagged);
    let words = audit::flag_words(&b).unwrap();
    assert!(words.contains("12 of 12"), "{words}");
    let ok = audit::runner_audit(f.store.as_ref(), &fair).await.unwrap();
    assert_eq!(ok.aa.trials, 12);
    assert!(!ok.flagged, "{:?}", ok.aa);
    assert!(ok.aa.hits <= 1, "{:?}", ok.aa);
    assert!(ok.last_canary.is_some());
    // A recalibration by hand starts the flag afresh.
    f.store
        .reset_runner_audit(biased.id, chrono::Utc::now())
        .await
        .unwrap();
    let biased = f.store.runner(biased.id).await.unwrap().unwrap();
    let after = audit::runner_audit(f.store.as_ref(), &biased)
        .await
        .unwrap();
    assert!(!after.flagged);
    assert_eq!(after.aa_since_recalibration.trials, 0);
}

#[tokio::test]
async fn planted_canaries_are_scaled_when_scored_and_found() {
    let f = fixture().await;
    let r1 = runner(&f.store, "r1").await;
    let mut config = config();
    config.canary = Some(CanarySpec {
        runner_id: r1.id.0,
        planted_pct: Some(5.0),
        planted_by: PlantedBy::Scale,
    });
    let c = f
        .store
        .create_comparison(&new_comparison(&f, None, config))
        .await
        .unwrap();
    let mut noise = Noise(3);
    // The samples are of the same build; scoring adds the 5%.
    run_job(&f.store, &r1, 12, 1.0, &mut noise).await;
    audit::after_job(&f.store, c.id).await;
    let rows = f.store.canary_results(r1.id).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].verdict, VerdictKind::Slower);
    assert_eq!(rows[0].planted_pct, Some(5.0));
    assert!(
        rows[0].rounds < 12,
        "decided before the last round: {:?}",
        rows[0]
    );
}

#[tokio::test]
async fn forecasts_are_recorded_and_scored_against_what_came() {
    let f = fixture().await;
    let r1 = runner(&f.store, "r1").await;
    let c = f
        .store
        .create_comparison(&new_comparison(&f, Some(9), config()))
        .await
        .unwrap();
    // 1.5% slower with 0.5% noise: 3 rounds say "needs N more", more rounds decide.
    let mut noise = Noise(11);
    run_job(&f.store, &r1, 3, 1.015, &mut noise).await;
    comparison_analysis::analyze_comparison(&f.store, c.id)
        .await
        .unwrap();
    audit::after_job(&f.store, c.id).await;
    let said = f.store.runner_forecasts(r1.id).await.unwrap();
    assert_eq!(said.len(), 1, "{said:?}");
    let first = &said[0];
    assert_eq!((first.at_rounds, first.decided_rounds), (3, None));
    assert!(first.needed > 0);

    f.store
        .add_rounds(
            c.id,
            &[NewJob {
                rounds: 30,
                priority: Priority::INTERACTIVE,
                max_attempts: 3,
                origin: Some("rebench:1".into()),
            }],
        )
        .await
        .unwrap();
    run_job(&f.store, &r1, 30, 1.015, &mut noise).await;
    comparison_analysis::analyze_comparison(&f.store, c.id)
        .await
        .unwrap();
    audit::after_job(&f.store, c.id).await;
    let results = f.store.comparison_results(c.id).await.unwrap();
    let row = &results[0].result;
    assert_eq!(row.verdict, VerdictKind::Slower, "{row:?}");
    let settled = f.store.runner_forecasts(r1.id).await.unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].decided_rounds, Some(33));
    let a = audit::runner_audit(f.store.as_ref(), &r1).await.unwrap();
    assert_eq!((a.forecasts.scored, a.forecasts.open), (1, 0));
    let took = 33 - 3;
    let within = (took as f64 - first.needed as f64).abs() <= 0.3 * first.needed as f64;
    assert_eq!(a.forecasts.within, usize::from(within));
    assert_eq!(
        a.forecasts.median_ratio,
        Some(took as f64 / first.needed as f64)
    );
}

/// The modelled layout factor of a build salt: 0.96 to 1.04, fixed per salt.
fn layout_factor(salt: &str) -> f64 {
    let h = salt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    0.96 + 0.08 * ((h % 10_001) as f64 / 10_000.0)
}

/// Runs a calibration job on `runner`: both sides' speed scaled by their build's layout factor
/// (1 for an A/A session without salts), and records its session.
async fn calibrate(f: &Fixture, runner: &Runner, salts: Option<LayoutSalts>, noise: &mut Noise) {
    let mut config = config();
    config.config.benchmark.layout_salt = Some("RUSTFLAGS=-Cmetadata={salt}".into());
    config.layout = salts.clone();
    f.store
        .enqueue_calibration(&NewCalibration {
            runner_id: runner.id,
            repository_id: f.repo.id,
            sha: "b".repeat(40),
            runner_label: "x".into(),
            config,
            rounds: 10,
            priority: Priority::INTERACTIVE,
            max_attempts: 3,
        })
        .await
        .unwrap();
    let factor = salts.map_or(1.0, |s| layout_factor(&s.head) / layout_factor(&s.base));
    let job = run_job(&f.store, runner, 10, factor, noise).await;
    calibration::record_session(&f.store, &job).await;
}

/// A PR comparison on `runner` whose head is `change` slower and built with `salts`.
async fn pr_verdict(
    f: &Fixture,
    runner: &Runner,
    pr: i64,
    change: f64,
    salts: &LayoutSalts,
    noise: &mut Noise,
) -> benchgate_api::BenchmarkResult {
    let c = f
        .store
        .create_comparison(
            &new_comparison(f, Some(pr), config()).between("b".repeat(40), format!("{pr:0>40}")),
        )
        .await
        .unwrap();
    let layout = layout_factor(&salts.head) / layout_factor(&salts.base);
    run_job(&f.store, runner, 20, change * layout, noise).await;
    comparison_analysis::analyze_comparison(&f.store, c.id)
        .await
        .unwrap();
    let results = f.store.comparison_results(c.id).await.unwrap();
    results[0].result.clone()
}

#[tokio::test]
async fn a_layout_shift_is_no_change_with_the_layout_floor_and_a_real_change_still_fails() {
    let f = fixture().await;
    let r1 = runner(&f.store, "r1").await;
    let mut noise = Noise(5);
    calibrate(&f, &r1, None, &mut noise).await;
    calibrate(&f, &r1, None, &mut noise).await;
    // Salts whose builds differ by 2–4%: what a PR that moves code around gets.
    let pair = |i: u32| LayoutSalts {
        base: format!("base{i}"),
        head: format!("head{i}"),
    };
    let shift = |s: &LayoutSalts| layout_factor(&s.head) / layout_factor(&s.base);
    let pr_salts = (0..1000)
        .map(pair)
        .find(|s| (1.02..1.04).contains(&shift(s)))
        .expect("some salts differ by 2–4%");

    // Without a layout floor, rebuilding alone reads as "slower".
    let before = pr_verdict(&f, &r1, 1, 1.0, &pr_salts, &mut noise).await;
    assert_eq!(before.verdict, VerdictKind::Slower, "{before:?}");
    assert_eq!(before.layout_pct, None);

    // The layout calibration: eight sessions, each side its own salted build. Below eight the
    // floor has no layout spread yet.
    let key = FloorKey {
        runner_id: r1.id,
        repository_id: f.repo.id,
        benchmark: "parse".into(),
        metric: "time".into(),
    };
    for i in 0..calibration::LAYOUT_SESSIONS {
        let floor = f.store.noise_floor(&key).await.unwrap().expect("a floor");
        assert_eq!(floor.layout_bias, None, "after {i} salted builds");
        calibrate(&f, &r1, Some(pair(2000 + i as u32)), &mut noise).await;
    }
    let floor = f.store.noise_floor(&key).await.unwrap().expect("a floor");
    assert_eq!(floor.sessions, 2, "layout sessions are not A/A sessions");
    let layout = floor.layout_bias.expect("a layout spread");
    let (lower, upper) = (floor.layout_lower.unwrap(), floor.layout_upper.unwrap());
    assert!(lower < layout && layout < upper, "{floor:?}");
    // Here 0.027 < 0.040 < 0.082: the band 2·lower covers the PR's shift of 0.027.
    assert!(2.0 * lower > shift(&pr_salts).ln(), "{floor:?}");
    assert!(layout > 0.01, "{layout}");

    let same_code = pr_verdict(&f, &r1, 2, 1.0, &pr_salts, &mut noise).await;
    assert_eq!(same_code.verdict, VerdictKind::Equivalent, "{same_code:?}");
    assert!(same_code.layout_pct.is_some());
    assert!(
        benchgate_stats::words::verdict(&same_code).ends_with("(layout)"),
        "{}",
        benchgate_stats::words::verdict(&same_code)
    );
    let real = pr_verdict(&f, &r1, 3, 1.10, &pr_salts, &mut noise).await;
    assert_eq!(real.verdict, VerdictKind::Slower, "{real:?}");
    assert!(benchgate_stats::is_regression(
        &real,
        benchgate_api::FailOn::Regression
    ));
}
