//! The agent protocol end to end: the real `benchgate serve` and `benchgate runner` processes on
//! one database, driven over HTTP the way an agent drives it (no agent process needed).

use std::time::Duration;

use crate::support::agent::{
    ADMIN, add_runner_with_labels, comparison, create_comparison, runner_cli,
};
use crate::support::{FreshPostgres, Server, http, postgres_admin_url, spawn_server, wait_until};
use benchgate_api::agent::{
    BenchmarkSpec, ClaimRequest, ClaimedJob, ComparisonConfig, CompleteRequest,
    CreateComparisonRequest, GateSpec, HeartbeatRequest, HeartbeatResponse, JobKind, JobOutcome,
    RoundUpload, ScheduleKind, UploadReceipt, UploadedSample,
};
use benchgate_api::{Measurement, Side, VerdictKind};
use reqwest::StatusCode;

/// A wire value as JSON (a macro: this package has no direct serde dependency to name the bound).
macro_rules! json {
    ($value:expr) => {
        serde_json::to_value($value).unwrap()
    };
}

/// An agent's side of the protocol, as plain HTTP calls.
struct Agent {
    client: reqwest::Client,
    server: String,
    token: String,
}

impl Agent {
    fn new(server: &Server, token: &str) -> Agent {
        Agent {
            client: http(),
            server: server.url(""),
            token: token.to_owned(),
        }
    }

    async fn post(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        self.client
            .post(format!("{}{path}", self.server))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    async fn put(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        self.client
            .put(format!("{}{path}", self.server))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    async fn claim(&self, wait_secs: u64) -> Option<ClaimedJob> {
        let req = ClaimRequest {
            labels: vec![],
            wait_secs: Some(wait_secs),
        };
        let resp = self.post("/api/v1/jobs/claim", json!(&req)).await;
        match resp.status() {
            StatusCode::NO_CONTENT => None,
            StatusCode::OK => Some(resp.json().await.unwrap()),
            s => panic!("claim answered {s}: {}", resp.text().await.unwrap()),
        }
    }

    async fn heartbeat(&self, job: &ClaimedJob) -> reqwest::Response {
        let req = HeartbeatRequest {
            lease_token: job.lease_token.clone(),
            rounds_done: 0,
        };
        self.post(
            &format!("/api/v1/jobs/{}/heartbeat", job.job_id),
            json!(&req),
        )
        .await
    }

    /// Uploads round `round` with the given base and head values (ABBA order).
    async fn upload(
        &self,
        job: &ClaimedJob,
        round: i64,
        base: f64,
        head: f64,
    ) -> reqwest::Response {
        let base_first = round % 2 == 0;
        let sample = |side, value, first: bool| UploadedSample {
            side,
            position: if first { 0 } else { 1 },
            measurement: Measurement {
                benchmark: "fib".into(),
                metric: "time".into(),
                unit: "ns".into(),
                value,
                lower: None,
                upper: None,
                direction: Default::default(),
                run: None,
            },
        };
        let req = RoundUpload {
            lease_token: job.lease_token.clone(),
            attempt: job.attempt,
            round,
            base_first,
            samples: vec![
                sample(Side::Base, base, base_first),
                sample(Side::Head, head, !base_first),
            ],
        };
        self.post(&format!("/api/v1/jobs/{}/rounds", job.job_id), json!(&req))
            .await
    }

    async fn complete(&self, job: &ClaimedJob) -> reqwest::Response {
        let req = CompleteRequest {
            lease_token: job.lease_token.clone(),
            outcome: JobOutcome::Succeeded { log_tail: None },
        };
        self.post(
            &format!("/api/v1/jobs/{}/complete", job.job_id),
            json!(&req),
        )
        .await
    }
}

/// Small deterministic noise around 1: `1 ± 0.5%`.
fn noise(i: i64, phase: f64) -> f64 {
    1.0 + 0.005 * (i as f64 * 1.7 + phase).sin()
}

fn comparison_request(rounds: u32) -> CreateComparisonRequest {
    CreateComparisonRequest {
        repository: "https://example.invalid/acme/widgets.git".into(),
        base: "a".repeat(40),
        head: "b".repeat(40),
        runner_label: "linux".into(),
        config: ComparisonConfig {
            benchmark: BenchmarkSpec {
                build: None,
                run: "./bench".into(),
                format: "command".into(),
                rounds,
                warmup: 1,
                schedule: ScheduleKind::Abba,
                seed: None,
                timeout_secs: None,
                env: vec![],
                bench_from_head: Vec::new(),
                network: false,
                layout_salt: None,
                canary_work: false,
                counts: None,
                count_run: None,
                ignore: Vec::new(),
                artifacts: Vec::new(),
                measure_secs: None,
                measure_auto: false,
                budget_secs: None,
            },
            gate: GateSpec::default(),
            suite: None,
            rules: Vec::new(),
        },
        jobs: None,
    }
}

/// When the server last saw the runner `name` (any request with its token).
async fn last_seen(database_url: &str, name: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let store = benchgate_store::connect(database_url).await.unwrap();
    let runners = store.list_runners().await.unwrap();
    let runner = runners.iter().find(|r| r.name == name).expect("the runner");
    runner.last_seen_at
}

/// Claim, heartbeat, upload, complete; the result says "slower"; then the A/A job the first
/// claim enqueued gives the runner a floor that plans the next comparison's n*.
async fn full_flow(database_url: &str) {
    let server = spawn_server(database_url, &[("BENCHGATE_ADMIN_TOKEN", ADMIN)]);
    let token = add_runner_with_labels(database_url, "quiet-1", "linux,x86");
    let listed = runner_cli(database_url, &["list"]);
    assert!(
        listed.contains("quiet-1") && listed.contains("linux,x86"),
        "{listed}"
    );

    let wrong = Agent::new(&server, "not-a-token");
    let resp = wrong
        .post("/api/v1/jobs/claim", json!(&ClaimRequest::default()))
        .await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let resp = http()
        .post(server.url("/api/v1/comparisons"))
        .json(&comparison_request(10))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::UNAUTHORIZED,
        "admin API needs the token"
    );

    let agent = Agent::new(&server, &token);
    assert!(agent.claim(0).await.is_none(), "nothing queued yet: 204");
    // A claim waiting in its long poll gets the job enqueued meanwhile: enqueued once the claim
    // has reached the server, which marks its runner seen.
    let seen_before = last_seen(database_url, "quiet-1").await;
    let (job, created) = tokio::join!(agent.claim(10), async {
        wait_until(
            "the claim to reach the server",
            Duration::from_secs(10),
            async || match last_seen(database_url, "quiet-1").await {
                seen if seen != seen_before => Ok(()),
                seen => Err(format!("quiet-1 last seen {seen:?}")),
            },
        )
        .await;
        create_comparison(&server, &comparison_request(10)).await
    });
    let job = job.expect("the comparison's job, within the long poll");
    assert_eq!(created.planned_rounds, None, "no floor yet");
    assert_eq!(comparison(&server, created.id).await.state, "running");
    assert_eq!(
        (job.kind, job.attempt, job.benchmark.rounds),
        (JobKind::Comparison, 1, 10)
    );
    assert_eq!(job.head_sha, "b".repeat(40));
    let beat: HeartbeatResponse = agent.heartbeat(&job).await.json().await.unwrap();
    assert!(!beat.cancelled);
    for round in 0..10 {
        let resp = agent
            .upload(
                &job,
                round,
                100.0 * noise(round, 0.0),
                110.0 * noise(round, 2.0),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
    }
    let again: UploadReceipt = agent.upload(&job, 3, 1.0, 1.0).await.json().await.unwrap();
    assert_eq!(
        (again.inserted, again.duplicates),
        (0, 2),
        "re-upload is idempotent"
    );
    assert_eq!(agent.complete(&job).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        agent.complete(&job).await.status(),
        StatusCode::NO_CONTENT,
        "repeat is harmless"
    );

    let status = comparison(&server, created.id).await;
    assert_eq!(status.state, "done");
    assert_eq!(status.runners.len(), 1);
    let headline = &status.runners[0];
    assert!(headline.headline && headline.runner == "quiet-1");
    let fib = &headline.report.benchmarks[0];
    assert_eq!((fib.name.as_str(), fib.n), ("fib", 10));
    assert_eq!(fib.verdict, VerdictKind::Slower, "{fib:?}");
    assert!((fib.change_pct.unwrap() - 10.0).abs() < 1.0, "{fib:?}");

    let aa = agent
        .claim(5)
        .await
        .expect("first claim enqueued an A/A job");
    assert_eq!(aa.kind, JobKind::Calibration);
    assert_eq!(
        (aa.base_sha.as_str(), aa.head_sha.as_str()),
        (job.base_sha.as_str(), job.base_sha.as_str())
    );
    for round in 0..i64::from(aa.benchmark.rounds) {
        let resp = agent
            .upload(
                &aa,
                round,
                100.0 * noise(round, 0.0),
                100.0 * noise(round, 1.0),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
    }
    assert_eq!(agent.complete(&aa).await.status(), StatusCode::NO_CONTENT);
    let next = create_comparison(&server, &comparison_request(10)).await;
    assert!(next.planned_rounds.is_some(), "the A/A floor plans n*");

    let fingerprint =
        serde_json::json!({"fingerprint": {"cpu_model": "Test CPU", "logical_cores": 2}});
    let resp = agent
        .put("/api/v1/runners/me/fingerprint", fingerprint)
        .await;
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    let held = agent.claim(5).await.expect("the next comparison's job");
    let release = serde_json::json!({"lease_token": held.lease_token});
    let path = format!("/api/v1/jobs/{}/release", held.job_id);
    assert_eq!(
        agent.post(&path, release).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        agent.upload(&held, 0, 1.0, 1.0).await.status(),
        StatusCode::CONFLICT
    );
    let again = agent
        .claim(5)
        .await
        .expect("the released job, back in the queue");
    assert_eq!(again.job_id, held.job_id);

    runner_cli(database_url, &["revoke", "quiet-1"]);
    let resp = agent
        .post("/api/v1/jobs/claim", json!(&ClaimRequest::default()))
        .await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "revoked token");

    let logs: Vec<String> = server.logs.try_iter().collect();
    for secret in [token.as_str(), job.lease_token.as_str(), ADMIN] {
        assert!(
            !logs.iter().any(|l| l.contains(secret)),
            "a secret reached the log"
        );
    }
}

#[tokio::test]
async fn agent_protocol_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    full_flow(&url).await;
}

// Sync: FreshPostgres runs its own runtime to create and drop the database.
#[test]
fn agent_protocol_on_postgres() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let db = FreshPostgres::create(&admin);
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(full_flow(&db.url));
}

#[tokio::test]
async fn expired_lease_is_requeued_to_another_runner_and_late_writes_get_409() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(
        &url,
        &[
            ("BENCHGATE_ADMIN_TOKEN", ADMIN),
            ("BENCHGATE_LEASE_SECS", "2"),
        ],
    );
    let first = Agent::new(&server, &add_runner_with_labels(&url, "first", "linux"));
    let second = Agent::new(&server, &add_runner_with_labels(&url, "second", "linux"));
    let created = create_comparison(&server, &comparison_request(6)).await;

    let job = first.claim(5).await.expect("a job");
    for round in 0..3 {
        let resp = first
            .upload(
                &job,
                round,
                100.0 * noise(round, 0.0),
                110.0 * noise(round, 2.0),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
    }
    // The first agent goes silent; the reaper requeues its job.
    server.wait_for_log("lease expired; requeued", Duration::from_secs(20));
    assert_eq!(
        first.upload(&job, 3, 100.0, 110.0).await.status(),
        StatusCode::CONFLICT
    );
    assert_eq!(first.heartbeat(&job).await.status(), StatusCode::CONFLICT);
    assert_eq!(first.complete(&job).await.status(), StatusCode::CONFLICT);

    let retry = second.claim(5).await.expect("the requeued job");
    assert_eq!((retry.job_id, retry.attempt), (job.job_id, 2));
    for round in 0..6 {
        assert_eq!(second.heartbeat(&retry).await.status(), StatusCode::OK);
        let resp = second
            .upload(
                &retry,
                round,
                100.0 * noise(round, 0.5),
                110.0 * noise(round, 2.5),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
    }
    assert_eq!(
        second.complete(&retry).await.status(),
        StatusCode::NO_CONTENT
    );

    let status = comparison(&server, created.id).await;
    assert_eq!(status.state, "done");
    let pairs: Vec<(&str, bool, usize)> = status
        .runners
        .iter()
        .map(|r| (r.runner.as_str(), r.headline, r.report.benchmarks[0].n))
        .collect();
    assert_eq!(
        pairs,
        [("second", true, 6), ("first", false, 3)],
        "series never pooled"
    );
}

/// A round of `count` samples, all of benchmark `name`.
fn round_of(job: &ClaimedJob, round: i64, name: &str, count: usize) -> serde_json::Value {
    let samples = (0..count)
        .map(|i| UploadedSample {
            side: if i % 2 == 0 { Side::Base } else { Side::Head },
            position: (i % 2) as i64,
            measurement: Measurement {
                benchmark: format!("{name}{}", i / 2),
                metric: "time".into(),
                unit: "ns".into(),
                value: 100.0 + (i % 2) as f64,
                lower: None,
                upper: None,
                direction: Default::default(),
                run: None,
            },
        })
        .collect();
    json!(&RoundUpload {
        lease_token: job.lease_token.clone(),
        attempt: job.attempt,
        round,
        base_first: true,
        samples,
    })
}

#[tokio::test]
async fn uploads_the_store_cannot_keep_get_400_and_large_rounds_fit() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(&url, &[("BENCHGATE_ADMIN_TOKEN", ADMIN)]);
    let agent = Agent::new(&server, &add_runner_with_labels(&url, "big", "linux"));
    let created = create_comparison(&server, &comparison_request(4)).await;
    let job = agent.claim(5).await.expect("a job");
    let path = format!("/api/v1/jobs/{}/rounds", job.job_id);

    // A benchmark name with a NUL byte (it comes from the benchmark's own output).
    let resp = agent.post(&path, round_of(&job, 0, "bad\0name", 2)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body = resp.text().await.unwrap();
    assert!(body.contains("NUL byte"), "{body}");

    let resp = agent.post(&path, round_of(&job, -1, "ok", 2)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);

    // More series than any suite has: refused, named, nothing stored.
    let resp = agent
        .post(&path, round_of(&job, 0, "runaway-", 40_002))
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body = resp.text().await.unwrap();
    assert!(body.contains("20001 benchmark and metric series"), "{body}");

    // 10,000 benchmarks in one round: past axum's 2 MiB default, within
    // the server's body limit.
    let big = round_of(&job, 0, "suite/bench-with-a-long-name-", 20_000);
    assert!(serde_json::to_vec(&big).unwrap().len() > 2 * 1024 * 1024);
    let resp = agent.post(&path, big).await;
    assert_eq!(
        resp.status(),
        StatusCode::OK,
        "{}",
        resp.text().await.unwrap()
    );
    let receipt: UploadReceipt = resp.json().await.unwrap();
    assert_eq!(receipt.inserted, 20_000);

    // The comparison page of a 10,000-benchmark suite is paged: each page shows 50 rows with
    // their plots, and stays small.
    let id = created.id;
    for (page, rows) in [(1, "Rows 1–50 of 10000"), (200, "Rows 9951–10000 of 10000")] {
        let resp = http()
            .get(server.url(&format!("/comparisons/{id}?page={page}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let html = resp.text().await.unwrap();
        assert!(html.contains(rows), "page {page}");
        assert!(
            html.len() < 2_000_000,
            "page {page} is {} bytes",
            html.len()
        );
        assert_eq!(html.matches("<section id=\"b").count(), 50, "page {page}");
    }
}

/// One extreme value must not poison the store: beyond what the statistics can hold it is
/// refused with a 400 that names it; a round outside the job's plan is refused; and values at
/// the edge of what is allowed still give pages and the API that read back (no null where a
/// number is promised), also after the server restarts.
#[tokio::test]
async fn absurd_values_and_rounds_outside_the_plan_are_refused_and_pages_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(&url, &[("BENCHGATE_ADMIN_TOKEN", ADMIN)]);
    let agent = Agent::new(&server, &add_runner_with_labels(&url, "edge", "linux"));
    let created = create_comparison(&server, &comparison_request(4)).await;
    let job = agent.claim(5).await.expect("a job");

    let resp = agent.upload(&job, 0, 0.001, 1.7e308).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body = resp.text().await.unwrap();
    assert!(
        body.contains("fib time") && body.contains("no larger than 1e300"),
        "{body}"
    );
    let resp = agent.upload(&job, 0, -1.0, 1.0).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);

    for round in [4, 1_000_000_000_000] {
        let resp = agent.upload(&job, round, 1.0, 1.0).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "round {round}");
        let body = resp.text().await.unwrap();
        assert!(body.contains("outside its plan"), "{body}");
    }

    // The largest ratio the bounds allow: its percentage overflows a double.
    for round in 0..4 {
        let resp = agent
            .upload(&job, round, 1e-300, 1e300 / (1.0 + round as f64))
            .await;
        assert_eq!(
            resp.status(),
            StatusCode::OK,
            "{}",
            resp.text().await.unwrap()
        );
    }
    readable(&server, created.id).await;
    drop(server);
    // A stored row that no longer reads (written by a broken build, say) is skipped and
    // reported; the pages and the API keep working.
    let db = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO comparison_results (comparison_id, runner_id, benchmark, metric, result, updated_at) \
         SELECT comparison_id, runner_id, 'zzz', 'time', '{\"n\": null}', updated_at \
         FROM comparison_results LIMIT 1",
    )
    .execute(&db)
    .await
    .unwrap();
    db.close().await;
    let server = spawn_server(&url, &[("BENCHGATE_ADMIN_TOKEN", ADMIN)]);
    readable(&server, created.id).await;
    assert_eq!(
        comparison(&server, created.id).await.runners[0]
            .report
            .benchmarks
            .len(),
        1
    );
    server.wait_for_log("unreadable stored result skipped", Duration::from_secs(5));
}

/// The comparison's API answer parses and its pages answer 200.
async fn readable(server: &Server, id: i64) {
    let status = comparison(server, id).await;
    let fib = &status.runners[0].report.benchmarks[0];
    assert_eq!(fib.change_pct, None, "{fib:?}");
    assert!(fib.base_center.is_some_and(f64::is_finite), "{fib:?}");
    for page in [format!("/comparisons/{id}"), "/".to_owned()] {
        let resp = http().get(server.url(&page)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{page}");
    }
}

/// Two servers on one Postgres behind a load balancer: rounds of one job uploaded through both
/// at once. The stored result is always computed from every stored round (the store keeps the
/// analysis that saw the most samples), as one server alone would store it.
#[test]
fn two_servers_on_one_postgres_store_results_from_every_round() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let db = FreshPostgres::create(&admin);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let env = [("BENCHGATE_ADMIN_TOKEN", ADMIN)];
        let (a, b) = (spawn_server(&db.url, &env), spawn_server(&db.url, &env));
        let token = add_runner_with_labels(&db.url, "replicated", "linux");
        let (via_a, via_b) = (Agent::new(&a, &token), Agent::new(&b, &token));
        let rounds = 24;
        let created = create_comparison(&a, &comparison_request(rounds as u32)).await;
        let job = via_b.claim(5).await.expect("a job");
        for round in (0..rounds).step_by(2) {
            let value = |r: i64, phase| 1000.0 * noise(r, phase);
            let (x, y) = tokio::join!(
                via_a.upload(&job, round, value(round, 0.0), 1.1 * value(round, 1.0)),
                via_b.upload(
                    &job,
                    round + 1,
                    value(round + 1, 0.0),
                    1.1 * value(round + 1, 1.0)
                ),
            );
            assert_eq!((x.status(), y.status()), (StatusCode::OK, StatusCode::OK));
            // Whichever replica answers, the stored result covers every round stored so far.
            for server in [&a, &b] {
                let status = comparison(server, created.id).await;
                let fib = &status.runners[0].report.benchmarks[0];
                assert_eq!(
                    fib.n as i64,
                    round + 2,
                    "after round {}: {fib:?}",
                    round + 1
                );
            }
        }
        let fib = &comparison(&b, created.id).await.runners[0]
            .report
            .benchmarks[0];
        assert_eq!(fib.verdict, benchgate_api::VerdictKind::Slower, "{fib:?}");
    });
}

/// A profile upload the server cannot keep is refused with a 400 that says why, and nothing is
/// stored: to a measuring job, with unreadable stacks, or over the size a side may have; a
/// writer without the lease gets 409. A good one is served back as function changes.
#[tokio::test]
async fn profile_uploads_are_checked_and_served_back() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(&url, &[("BENCHGATE_ADMIN_TOKEN", ADMIN)]);
    let agent = Agent::new(&server, &add_runner_with_labels(&url, "prof", "linux"));
    let created = create_comparison(&server, &comparison_request(2)).await;
    let measuring = agent.claim(5).await.expect("a job");
    let upload = |job: &ClaimedJob, base: &str, head: &str| {
        serde_json::json!({
            "lease_token": job.lease_token, "event": "cpu-clock", "runs": 3,
            "base": base, "head": head,
        })
    };
    let path = |job: &ClaimedJob| format!("/api/v1/jobs/{}/profile", job.job_id);
    let resp = agent
        .post(
            &path(&measuring),
            upload(&measuring, "main 1\n", "main 1\n"),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.text().await.unwrap().contains("measures rounds"));

    let store = benchgate_store::connect(&url).await.unwrap();
    let job = benchgate_store::NewProfileJob {
        request: benchgate_api::agent::ProfileRequest {
            runs: 3,
            rows: Vec::new(),
            requested_by: "octocat".into(),
        },
        priority: benchgate_store::Priority::INTERACTIVE,
        max_attempts: 2,
        origin: "test:profile".into(),
    };
    let comparison = benchgate_store::ComparisonId(created.id);
    store
        .request_profile(comparison, &job)
        .await
        .unwrap()
        .unwrap();
    // The comparison's other measuring jobs may come first; they are left running.
    let mut profiling = agent.claim(5).await.expect("a job");
    for _ in 0..5 {
        if profiling.profile.is_some() {
            break;
        }
        profiling = agent.claim(5).await.expect("the profile job");
    }
    assert_eq!(profiling.profile.as_ref().map(|p| p.runs), Some(3));

    let resp = agent
        .post(
            &path(&profiling),
            upload(&profiling, "main;work twelve\n", ""),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body = resp.text().await.unwrap();
    assert!(
        body.contains("base stacks") && body.contains("line 1"),
        "{body}"
    );
    let huge = "main;work 1\n".repeat(60_000);
    let resp = agent
        .post(&path(&profiling), upload(&profiling, "main 1\n", &huge))
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.text().await.unwrap().contains("head stacks are"));
    let mut stolen = upload(&profiling, "main 1\n", "main 1\n");
    stolen["lease_token"] = "not-the-lease".into();
    assert_eq!(
        agent.post(&path(&profiling), stolen).await.status(),
        StatusCode::CONFLICT
    );
    assert!(
        store
            .comparison_profiles(comparison)
            .await
            .unwrap()
            .is_empty()
    );

    let resp = agent
        .post(
            &path(&profiling),
            upload(
                &profiling,
                "main;work 90\nmain;io 10\n",
                "main;work 90\nmain;slow_path 60\nmain;io 10\n",
            ),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    let json: serde_json::Value = http()
        .get(server.url(&format!("/api/v1/comparisons/{}/profile", created.id)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(json["functions"][0]["function"], "slow_path", "{json:#}");
    assert_eq!(json["runner"], "prof");
    assert_eq!(json["base_samples"], 100);
}

/// A round of a criterion run: `fib` with the 95% interval the run reported around its value
/// (log half-width 1.96·`se`).
fn criterion_round(
    job: &ClaimedJob,
    round: i64,
    base: f64,
    head: f64,
    se: f64,
) -> serde_json::Value {
    let half = 1.96 * se;
    let sample = |side, position, value: f64| UploadedSample {
        side,
        position,
        measurement: Measurement {
            benchmark: "fib".into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: Some(value * (-half).exp()),
            upper: Some(value * half.exp()),
            direction: Default::default(),
            run: None,
        },
    };
    json!(&RoundUpload {
        lease_token: job.lease_token.clone(),
        attempt: job.attempt,
        round,
        base_first: true,
        samples: vec![sample(Side::Base, 0, base), sample(Side::Head, 1, head)],
    })
}

/// `measure = "auto"`: comparisons claimed before the runner has an A/A session of the suite
/// measure the reference length, and so does a comparison created before the session ended
/// (one comparison, one length per runner); one created after measures the length the session
/// says answers soonest, which the runner's page states too.
#[tokio::test]
async fn measure_auto_takes_the_run_length_from_the_runner_s_a_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(&url, &[("BENCHGATE_ADMIN_TOKEN", ADMIN)]);
    let token = add_runner_with_labels(&url, "quiet-1", "linux");
    let agent = Agent::new(&server, &token);
    // A reference length small enough that rounds 0.3 s apart spend most of it besides
    // measuring (as a criterion run spends start-up and warm-up).
    let reference = 0.05;
    let mut req = comparison_request(12);
    req.config.benchmark.run = "cargo bench -- --measurement-time {measure_secs}".into();
    req.config.benchmark.format = "criterion".into();
    req.config.benchmark.measure_secs = Some(reference);
    req.config.benchmark.measure_auto = true;

    create_comparison(&server, &req).await;
    let first = agent.claim(5).await.expect("the first comparison's job");
    assert_eq!(first.kind, JobKind::Comparison);
    assert_eq!(first.benchmark.measure_secs, Some(reference), "no A/A yet");
    assert_eq!(
        agent.complete(&first).await.status(),
        StatusCode::NO_CONTENT
    );

    let aa = agent
        .claim(5)
        .await
        .expect("the A/A the first claim enqueued");
    assert_eq!(aa.kind, JobKind::Calibration);
    assert_eq!(
        aa.benchmark.measure_secs,
        Some(reference),
        "A/A sessions measure the reference length the split is stated at"
    );
    let before_the_session = create_comparison(&server, &req).await;
    // Log-ratios alternate ±2%; each run's own error is half of a run's variance.
    let within = (12.0 * 0.0004 / 11.0 / 2.0 / 2.0_f64).sqrt();
    assert_eq!(aa.benchmark.rounds, 12);
    for round in 0..12 {
        let head = 100.0 * if round % 2 == 0 { 0.02_f64 } else { -0.02 }.exp();
        let resp = agent
            .post(
                &format!("/api/v1/jobs/{}/rounds", aa.job_id),
                criterion_round(&aa, round, 100.0, head, within),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(agent.complete(&aa).await.status(), StatusCode::NO_CONTENT);

    let older = agent
        .claim(5)
        .await
        .expect("the comparison made before the A/A ended");
    assert_eq!(older.job_id, before_the_session.jobs[0]);
    assert_eq!(older.benchmark.measure_secs, Some(reference));
    assert_eq!(
        agent.complete(&older).await.status(),
        StatusCode::NO_CONTENT
    );

    create_comparison(&server, &req).await;
    let newer = agent
        .claim(5)
        .await
        .expect("a comparison made after the A/A");
    let chosen = newer.benchmark.measure_secs.expect("a length");
    // Rounds ≥ 0.3 s apart leave ≥ 0.1 s per run besides the 0.05 s measured, so with half
    // the variance within runs, t = sqrt(0.05·0.1) ≥ 0.07 s: more than the reference, and
    // never beyond ten times it.
    assert!(
        chosen > reference && chosen <= 10.0 * reference,
        "chosen {chosen} s"
    );
    let page: serde_json::Value = http()
        .get(server.url("/api/v1/runners/quiet-1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let advice = &page["run_lengths"][0];
    assert_eq!(advice["best_secs"].as_f64(), Some(chosen), "{page}");
    assert_eq!(advice["auto"], true);
    let words = advice["words"].as_str().unwrap();
    assert!(
        words.contains("12 A/A pairs of fib at 0.05 s per benchmark")
            && words.contains("(measure = \"auto\")"),
        "{words}"
    );
    let html = http()
        .get(server.url("/runners/quiet-1"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("<h2 id=\"run-length\">Run length</h2>")
            && html.contains("12 A/A pairs of fib at 0.05 s per benchmark"),
        "the runner page states the advice"
    );
    let logs: Vec<String> = server.logs.try_iter().collect();
    assert!(
        logs.iter()
            .any(|l| l.contains("run length chosen from this runner's A/A session")),
        "the claim says where its length came from"
    );
}
