//! The slow mode of a runner's A/A runs, beside its noise floor: four A/A sessions on a real
//! SQLite file, one benchmark bistable (1 process in 6 at +30% on both sides) and one calm,
//! recorded as a finished calibration job is; then the runner page and its JSON as served.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use benchgate_api::agent::StoredComparisonConfig;
use benchgate_api::{Measurement, Side};
use benchgate_server::{AppState, ServeArgs, calibration};
use benchgate_store::*;
use clap::Parser;
use tower::ServiceExt as _;

const LEASE: Duration = Duration::from_secs(60);
const ROUNDS: i64 = 12;
const SESSIONS: i64 = 4;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

fn config() -> StoredComparisonConfig {
    serde_json::from_value(
        serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
    )
    .unwrap()
}

fn sample(benchmark: &str, side: Side, position: i64, value: f64) -> SampleInput {
    SampleInput {
        side,
        position,
        measurement: Measurement {
            benchmark: benchmark.into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
            run: None,
        },
    }
}

/// Round `k` of session `s`: `bimodal` runs 1 process in 6 at +30% on each side (never both
/// sides of one round), `calm` never; both scatter by ±0.4%.
fn round(s: i64, k: i64) -> RoundUpload {
    let scatter = |i: i64| 1.0 + 0.002 * ((i * 7 % 5) as f64 - 2.0);
    let mode = |slow: bool| if slow { 1.3 } else { 1.0 };
    let (base_pos, head_pos) = (k % 2, 1 - k % 2);
    let base_slow = (k + s) % 6 == 0;
    let head_slow = (k + s + 3) % 6 == 0;
    RoundUpload {
        round: k,
        samples: vec![
            sample(
                "bimodal",
                Side::Base,
                base_pos,
                190.0 * scatter(k + s) * mode(base_slow),
            ),
            sample(
                "bimodal",
                Side::Head,
                head_pos,
                190.0 * scatter(k + s + 2) * mode(head_slow),
            ),
            sample("calm", Side::Base, base_pos, 45.0 * scatter(k + 1)),
            sample("calm", Side::Head, head_pos, 45.0 * scatter(k + s + 3)),
        ],
    }
}

/// One A/A calibration on `runner`, run and recorded as the server records a finished one.
async fn calibrate(store: &Arc<dyn Store>, repo: &Repository, runner: &Runner, s: i64) {
    store
        .enqueue_calibration(&NewCalibration {
            runner_id: runner.id,
            repository_id: repo.id,
            sha: "a".repeat(40),
            runner_label: "x".into(),
            config: config(),
            rounds: ROUNDS,
            priority: Priority::INTERACTIVE,
            max_attempts: 3,
        })
        .await
        .unwrap();
    let claim = store
        .claim_job(runner.id, &["x".to_owned()], LEASE)
        .await
        .unwrap()
        .expect("the calibration job");
    for k in 0..ROUNDS {
        store
            .upload_round(claim.job.id, &claim.lease, &round(s, k))
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
    calibration::record_session(store, &claim.job).await;
}

async fn get(app: &AppState, path: &str) -> String {
    let response = benchgate_server::router(app.clone())
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8(body.to_vec()).unwrap()
}

/// The text of every `<td data-label="{label}">` cell of the page, in order.
fn cells(html: &str, label: &str) -> Vec<String> {
    let open = format!("<td data-label=\"{label}\">");
    html.split(&open)
        .skip(1)
        .map(|rest| rest.split("</td>").next().unwrap().trim().to_owned())
        .collect()
}

#[tokio::test]
async fn the_runner_page_shows_each_floors_slow_mode_over_its_aa_sessions() {
    let (store, repo, _dir, url) = crate::sqlite_with_repository().await;
    let runner = store
        .add_runner("r1", &["x".to_owned()])
        .await
        .unwrap()
        .runner;
    for s in 0..SESSIONS {
        calibrate(&store, &repo, &runner, s).await;
    }
    let serve = Cli::parse_from(["serve", "--database-url", &url]).serve;
    let app = AppState::new(serve, store.clone());

    let html = get(&app, "/runners/r1").await;
    let rows: Vec<String> = cells(&html, "benchmark")
        .into_iter()
        .zip(cells(&html, "modes"))
        .map(|(benchmark, modes)| format!("{benchmark}: {modes}"))
        .collect();
    insta::assert_snapshot!(rows.join("\n"), @r"
    bimodal: slow mode: 1 process in 6 (+30%) over 4 A/A sessions
    calm: no slow mode in 96 runs
    ");

    // The runner's JSON carries the same counts beside each floor.
    let json: serde_json::Value =
        serde_json::from_str(&get(&app, "/api/v1/runners/r1").await).unwrap();
    let floors = json["floors"].as_array().expect("floors");
    let mode = |benchmark: &str| {
        let floor = floors
            .iter()
            .find(|f| f["benchmark"] == benchmark)
            .expect("a floor");
        assert_eq!(floor["sessions"], SESSIONS);
        floor["slow_mode"].clone()
    };
    let bimodal = mode("bimodal");
    assert_eq!(
        (
            &bimodal["slow_runs"],
            &bimodal["runs"],
            &bimodal["sessions"]
        ),
        (&16.into(), &96.into(), &4.into())
    );
    let slow_pct = bimodal["slow_pct"].as_f64().expect("an excess");
    assert!((29.0..31.0).contains(&slow_pct), "{slow_pct}");
    let calm = mode("calm");
    assert_eq!(
        (&calm["slow_runs"], &calm["runs"], &calm["slow_pct"]),
        (&0.into(), &96.into(), &serde_json::Value::Null)
    );
}
