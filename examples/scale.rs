//! Scale test: the real `benchgate serve` on a real port and a fresh database (SQLite file or
//! Postgres), `--agents` simulated agents long-polling `POST /api/v1/jobs/claim` over HTTP, and
//! `--comparisons` comparisons of `--benchmarks` × `--metrics` series whose rounds they upload.
//! Prints claim latency, upload-to-stored-result latency, the server's analysis time per
//! upload (its `/metrics` histogram and its debug log line per analysis), and its peak RSS.
//! docs/performance.md ("Scale test") records the figures.
//!
//! ```text
//! cargo build --release --bin benchgate --example scale
//! target/release/examples/scale --db sqlite            # 200 agents, 50 × 500 × 3
//! target/release/examples/scale --db postgres          # BENCHGATE_TEST_POSTGRES_URL
//! target/release/examples/scale --agents 1 --comparisons 1 --jobs 1 --rounds 40   # growth
//! ```
//!
//! The server analyses a comparison inside the upload request and stores the results before it
//! answers, so the upload's round trip is the time from sending a round to its result being
//! readable through `GET /api/v1/comparisons/{id}`; `--check-visible` confirms that on one
//! agent by reading the comparison after each of its uploads.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use benchgate_api::agent::{
    BenchmarkSpec, ClaimRequest, ClaimedJob, ComparisonConfig, ComparisonStatus, CompleteRequest,
    CreateComparisonRequest, CreatedComparison, GateSpec, HeartbeatRequest, JobKind, JobOutcome,
    RoundUpload, ScheduleKind, UploadedSample,
};
use benchgate_api::{Measurement, Side};
use clap::{Parser, ValueEnum};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Db {
    Sqlite,
    Postgres,
}

#[derive(Parser, Debug)]
struct Cli {
    /// Database of the server: a fresh SQLite file, or a fresh database on the Postgres server
    /// of `--postgres`.
    #[arg(long, value_enum, default_value = "sqlite")]
    db: Db,
    /// Admin URL of the Postgres server (a fresh database is created beside it and dropped).
    #[arg(long, env = "BENCHGATE_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    /// Simulated agents, one runner each.
    #[arg(long, default_value_t = 200)]
    agents: usize,
    /// Comparisons, all queued before the agents start.
    #[arg(long, default_value_t = 50)]
    comparisons: usize,
    /// Jobs each comparison's rounds are split into (runners sharing it).
    #[arg(long, default_value_t = 4)]
    jobs: u32,
    /// Rounds of each comparison, over all its jobs.
    #[arg(long, default_value_t = 20)]
    rounds: u32,
    /// Benchmarks per comparison.
    #[arg(long, default_value_t = 500)]
    benchmarks: usize,
    /// Metrics per benchmark (time, instructions, peak_rss, then more counters).
    #[arg(long, default_value_t = 3)]
    metrics: usize,
    /// Seconds an agent "runs" a round before uploading it (0: upload as fast as the server
    /// answers, the worst case).
    #[arg(long, default_value_t = 0.0)]
    round_secs: f64,
    /// Seconds a claim may wait in its long poll.
    #[arg(long, default_value_t = 5)]
    claim_wait: u64,
    /// One agent reads its comparison after each upload and checks the new round is in it.
    #[arg(long)]
    check_visible: bool,
    /// The `benchgate` binary; by default the one beside this example's directory.
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Extra environment of the server, `KEY=VALUE` (repeatable).
    #[arg(long)]
    server_env: Vec<String>,
}

const ADMIN: &str = "scale-admin-token";
const LABEL: &str = "scale";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bin = match &cli.bin {
        Some(b) => b.clone(),
        None => std::env::current_exe()?
            .parent()
            .and_then(|examples| examples.parent())
            .context("no directory above the example")?
            .join("benchgate"),
    };
    anyhow::ensure!(
        bin.exists(),
        "{} is missing: cargo build --release --bin benchgate",
        bin.display()
    );
    let scratch = tempfile::tempdir()?;
    let database = FreshDatabase::create(&cli, scratch.path()).await?;
    println!(
        "scale: {:?}, {} agents, {} comparisons × {} jobs × {} rounds, {} benchmarks × {} metrics",
        cli.db, cli.agents, cli.comparisons, cli.jobs, cli.rounds, cli.benchmarks, cli.metrics
    );

    let mut server = ServerProcess::spawn(&bin, &database.url, &cli.server_env)?;
    let base = format!("http://{}", server.addr);
    let started = Instant::now();
    let tokens = register_runners(&bin, &database.url, cli.agents)?;
    println!(
        "registered {} runners in {:.1} s",
        tokens.len(),
        started.elapsed().as_secs_f64()
    );

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(cli.agents + 8)
        .timeout(Duration::from_secs(600))
        .build()?;
    let mut job_comparison = BTreeMap::new();
    let mut comparison_ids = Vec::new();
    for i in 0..cli.comparisons {
        let created = create_comparison(&client, &base, &cli, i).await?;
        for job in &created.jobs {
            job_comparison.insert(*job, created.id);
        }
        comparison_ids.push(created.id);
    }
    let ctx = Arc::new(Run {
        client,
        base: base.clone(),
        comparison_jobs: cli.comparisons * cli.jobs as usize,
        benchmarks: cli.benchmarks,
        metrics: cli.metrics,
        round_secs: cli.round_secs,
        claim_wait: cli.claim_wait,
        job_comparison,
        comparison_jobs_done: AtomicUsize::new(0),
        finished: tokio::sync::Notify::new(),
        record: Mutex::new(Record::default()),
    });

    let run_started = Instant::now();
    let mut agents = tokio::task::JoinSet::new();
    for (i, token) in tokens.into_iter().enumerate() {
        let ctx = Arc::clone(&ctx);
        let check = cli.check_visible && i == 0;
        agents.spawn(async move { agent(ctx, i, token, check).await });
    }
    let finished = ctx.finished.notified();
    tokio::select! {
        () = finished => {}
        Some(result) = agents.join_next() => {
            result??;
            bail!("an agent stopped before the comparisons finished");
        }
    }
    let wall = run_started.elapsed();
    agents.abort_all();
    // What the agents had in flight is cut off; the figures below count finished requests.
    while agents.join_next().await.is_some() {}

    let metrics = ctx
        .client
        .get(format!("{base}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    let peak_rss_kib = peak_rss_kib(server.child.id())?;
    check_results(&ctx.client, &base, &comparison_ids, &cli).await?;
    let (analyses, served): (Vec<Analysis>, Vec<Analysis>) =
        server.analysis_log().into_iter().partition(|a| !a.served);
    server.stop();

    {
        let record = ctx.record.lock().unwrap();
        report(&cli, &record, wall, &metrics, peak_rss_kib, &analyses);
        if !served.is_empty() {
            println!(
                "uploads served by an analysis that began after them (no analysis of their own): {}",
                served.len()
            );
        }
    }
    database.drop_it().await?;
    Ok(())
}

/// Everything the agents measured.
#[derive(Default)]
struct Record {
    /// Claims answered with a job.
    claims: Vec<Duration>,
    /// Claims answered 204 (nothing within the wait).
    empty_polls: usize,
    /// Round uploads of comparison jobs: (1-based round of the job, round trip).
    uploads: Vec<(u32, Duration)>,
    /// Round uploads of calibration (A/A) jobs.
    calibration_uploads: Vec<Duration>,
    /// Uploads whose comparison was read back with that round in it (`--check-visible`).
    visible_checked: usize,
}

struct Run {
    client: reqwest::Client,
    base: String,
    comparison_jobs: usize,
    benchmarks: usize,
    metrics: usize,
    round_secs: f64,
    claim_wait: u64,
    job_comparison: BTreeMap<i64, i64>,
    comparison_jobs_done: AtomicUsize,
    finished: tokio::sync::Notify,
    record: Mutex<Record>,
}

/// One simulated agent: report a fingerprint, then claim, upload every round, complete; again.
async fn agent(
    ctx: Arc<Run>,
    index: usize,
    token: String,
    check_visible: bool,
) -> anyhow::Result<()> {
    let post = |path: String, body: serde_json::Value| {
        ctx.client
            .post(format!("{}{path}", ctx.base))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    // One hardware class for all: the server combines a comparison's runners stratified.
    let fingerprint = serde_json::json!({"fingerprint": {
        "cpu_model": "Scale Test CPU", "logical_cores": 8, "physical_cores": 4,
        "kernel": "Linux 6.1", "governor": "performance", "memory_bytes": 17179869184u64,
    }});
    let resp = ctx
        .client
        .put(format!("{}/api/v1/runners/me/fingerprint", ctx.base))
        .bearer_auth(&token)
        .json(&fingerprint)
        .send()
        .await?;
    anyhow::ensure!(resp.status().is_success(), "fingerprint: {}", resp.status());
    loop {
        let claim = ClaimRequest {
            labels: vec![],
            wait_secs: Some(ctx.claim_wait),
        };
        let asked = Instant::now();
        let resp = post("/api/v1/jobs/claim".into(), serde_json::to_value(&claim)?).await?;
        let took = asked.elapsed();
        match resp.status().as_u16() {
            204 => {
                ctx.record.lock().unwrap().empty_polls += 1;
                continue;
            }
            200 => ctx.record.lock().unwrap().claims.push(took),
            s => bail!("claim answered {s}: {}", resp.text().await?),
        }
        let job: ClaimedJob = resp.json().await?;
        let mut last_beat = Instant::now();
        for round in 0..job.benchmark.rounds {
            if ctx.round_secs > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(ctx.round_secs)).await;
            }
            if last_beat.elapsed() >= Duration::from_secs(job.heartbeat_secs) {
                let beat = HeartbeatRequest {
                    lease_token: job.lease_token.clone(),
                    rounds_done: round,
                };
                let path = format!("/api/v1/jobs/{}/heartbeat", job.job_id);
                let resp = post(path, serde_json::to_value(&beat)?).await?;
                anyhow::ensure!(resp.status().is_success(), "heartbeat: {}", resp.status());
                last_beat = Instant::now();
            }
            let upload = round_upload(&job, round, index, ctx.benchmarks, ctx.metrics);
            let body = serde_json::to_value(&upload)?;
            let sent = Instant::now();
            let resp = post(format!("/api/v1/jobs/{}/rounds", job.job_id), body).await?;
            let took = sent.elapsed();
            anyhow::ensure!(
                resp.status().is_success(),
                "upload answered {}: {}",
                resp.status(),
                resp.text().await?
            );
            match job.kind {
                JobKind::Comparison => {
                    ctx.record.lock().unwrap().uploads.push((round + 1, took));
                    if check_visible {
                        let id = ctx.job_comparison[&job.job_id];
                        let status = comparison(&ctx.client, &ctx.base, id).await?;
                        let pairs = status
                            .runners
                            .iter()
                            .flat_map(|r| &r.report.benchmarks)
                            .map(|b| b.n)
                            .max()
                            .unwrap_or(0);
                        // This agent's rounds of this job are in the stored result; others'
                        // rounds of the same comparison may be too.
                        anyhow::ensure!(
                            pairs >= (round + 1) as usize,
                            "round {round} uploaded but the comparison shows {pairs} pairs"
                        );
                        ctx.record.lock().unwrap().visible_checked += 1;
                    }
                }
                JobKind::Calibration => ctx.record.lock().unwrap().calibration_uploads.push(took),
            }
        }
        let done = CompleteRequest {
            lease_token: job.lease_token.clone(),
            outcome: JobOutcome::Succeeded { log_tail: None },
        };
        let path = format!("/api/v1/jobs/{}/complete", job.job_id);
        let resp = post(path, serde_json::to_value(&done)?).await?;
        anyhow::ensure!(resp.status().is_success(), "complete: {}", resp.status());
        if job.kind == JobKind::Comparison
            && ctx.comparison_jobs_done.fetch_add(1, Ordering::SeqCst) + 1 == ctx.comparison_jobs
        {
            ctx.finished.notify_one();
        }
    }
}

const METRICS: [(&str, &str); 6] = [
    ("time", "ns"),
    ("instructions", "count"),
    ("peak_rss", "bytes"),
    ("allocations", "count"),
    ("cpu_time", "ns"),
    ("branch_misses", "count"),
];

/// One round of every benchmark and metric on both sides: head is 3% slower on every tenth
/// benchmark, the rest unchanged, each value with ~1% of deterministic noise.
fn round_upload(
    job: &ClaimedJob,
    round: u32,
    agent: usize,
    benchmarks: usize,
    metrics: usize,
) -> RoundUpload {
    let base_first = round.is_multiple_of(2);
    let mut samples = Vec::with_capacity(benchmarks * metrics * 2);
    for b in 0..benchmarks {
        for (m, (metric, unit)) in METRICS.iter().cycle().take(metrics).enumerate() {
            for side in [Side::Base, Side::Head] {
                let seed = [
                    job.job_id as u64,
                    round as u64,
                    agent as u64,
                    b as u64,
                    m as u64,
                ];
                let noise = 1.0 + 0.01 * (unit_noise(&seed, side == Side::Head) - 0.5);
                let slower = if side == Side::Head && b % 10 == 0 {
                    1.03
                } else {
                    1.0
                };
                let scale = 1000.0 * (1 + b % 97) as f64 * (1 + m) as f64;
                let first = (side == Side::Base) == base_first;
                samples.push(UploadedSample {
                    side,
                    position: if first { 0 } else { 1 },
                    measurement: Measurement::new(
                        format!("suite/group_{}/bench_{b}", b % 20),
                        *metric,
                        *unit,
                        scale * slower * noise,
                    ),
                });
            }
        }
    }
    RoundUpload {
        lease_token: job.lease_token.clone(),
        attempt: job.attempt,
        round: i64::from(round),
        base_first,
        samples,
    }
}

/// A deterministic number in [0, 1) from `seed` (splitmix64 over the words).
fn unit_noise(seed: &[u64], head: bool) -> f64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(head);
    for w in seed {
        x = (x ^ w).wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
    }
    (x >> 11) as f64 / (1u64 << 53) as f64
}

async fn create_comparison(
    client: &reqwest::Client,
    base: &str,
    cli: &Cli,
    i: usize,
) -> anyhow::Result<CreatedComparison> {
    let req = CreateComparisonRequest {
        repository: format!("https://example.invalid/scale/project-{}.git", i % 5),
        base: format!("{:040x}", 2 * i + 1),
        head: format!("{:040x}", 2 * i + 2),
        runner_label: LABEL.into(),
        config: ComparisonConfig {
            benchmark: BenchmarkSpec {
                build: None,
                run: "cargo bench".into(),
                format: "criterion".into(),
                rounds: cli.rounds,
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
        jobs: Some(cli.jobs),
    };
    let resp = client
        .post(format!("{base}/api/v1/comparisons"))
        .bearer_auth(ADMIN)
        .json(&req)
        .send()
        .await?;
    let status = resp.status();
    let body = resp.text().await?;
    anyhow::ensure!(status.as_u16() == 201, "create comparison: {status} {body}");
    Ok(serde_json::from_str(&body)?)
}

async fn comparison(
    client: &reqwest::Client,
    base: &str,
    id: i64,
) -> anyhow::Result<ComparisonStatus> {
    let resp = client
        .get(format!("{base}/api/v1/comparisons/{id}"))
        .bearer_auth(ADMIN)
        .send()
        .await?;
    anyhow::ensure!(
        resp.status().is_success(),
        "comparison {id}: {}",
        resp.status()
    );
    Ok(resp.json().await?)
}

/// Every comparison is done and its stored rows hold every round of every series.
async fn check_results(
    client: &reqwest::Client,
    base: &str,
    ids: &[i64],
    cli: &Cli,
) -> anyhow::Result<()> {
    for &id in ids {
        let status = comparison(client, base, id).await?;
        let rows: Vec<_> = status
            .runners
            .iter()
            .flat_map(|r| &r.report.benchmarks)
            .collect();
        anyhow::ensure!(
            status.state == "done"
                && rows.len() == cli.benchmarks * cli.metrics
                && rows.iter().all(|r| r.n == cli.rounds as usize),
            "comparison {id}: state {}, {} rows, pairs {:?}",
            status.state,
            rows.len(),
            rows.iter().map(|r| r.n).min()
        );
    }
    Ok(())
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn ms(durations: impl Iterator<Item = Duration>) -> Vec<f64> {
    let mut v: Vec<f64> = durations.map(|d| d.as_secs_f64() * 1e3).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn report(
    cli: &Cli,
    record: &Record,
    wall: Duration,
    metrics: &str,
    peak_rss_kib: u64,
    analyses: &[Analysis],
) {
    let claims = ms(record.claims.iter().copied());
    let uploads = ms(record.uploads.iter().map(|(_, d)| *d));
    let calibration = ms(record.calibration_uploads.iter().copied());
    println!(
        "comparison rounds uploaded: {} in {:.1} s ({:.1} uploads/s, {} samples each)",
        uploads.len(),
        wall.as_secs_f64(),
        uploads.len() as f64 / wall.as_secs_f64(),
        cli.benchmarks * cli.metrics * 2
    );
    println!(
        "claims with a job: {}  p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms;  empty long polls: {}",
        claims.len(),
        quantile(&claims, 0.5),
        quantile(&claims, 0.99),
        claims.last().copied().unwrap_or(f64::NAN),
        record.empty_polls
    );
    println!(
        "upload → stored result: p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms",
        quantile(&uploads, 0.5),
        quantile(&uploads, 0.99),
        uploads.last().copied().unwrap_or(f64::NAN)
    );
    if !calibration.is_empty() {
        println!(
            "A/A uploads (no analysis): {}  p50 {:.1} ms  p99 {:.1} ms",
            calibration.len(),
            quantile(&calibration, 0.5),
            quantile(&calibration, 0.99)
        );
    }
    if record.visible_checked > 0 {
        println!(
            "read back after upload: {} of one agent's rounds were in the comparison's results",
            record.visible_checked
        );
    }
    let (sum, count) = histogram_sum_count(metrics, "benchgate_analysis_duration_seconds");
    println!(
        "analysis per upload (/metrics benchgate_analysis_duration_seconds): {count} analyses, mean {:.1} ms",
        1e3 * sum / count.max(1.0)
    );
    if !analyses.is_empty() {
        let sorted = |f: fn(&Analysis) -> f64| {
            let mut v: Vec<f64> = analyses.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (total, read, store) = (
            sorted(|a| a.total_ms),
            sorted(|a| a.read_ms),
            sorted(|a| a.store_ms),
        );
        println!(
            "analysis per upload (server log, {}): p50 {:.1} ms  p99 {:.1} ms;  of which reading samples p50 {:.1} ms, storing results p50 {:.1} ms",
            total.len(),
            quantile(&total, 0.5),
            quantile(&total, 0.99),
            quantile(&read, 0.5),
            quantile(&store, 0.5)
        );
        let waited = sorted(|a| a.waited_ms);
        if waited.iter().all(|w| w.is_finite()) {
            println!(
                "waiting for another analysis of the same comparison (not counted above): p50 {:.1} ms  p99 {:.1} ms",
                quantile(&waited, 0.5),
                quantile(&waited, 0.99)
            );
        }
        // Per pair count of the analysed comparison: does the cost grow like n or n²?
        let mut by_pairs: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for a in analyses {
            by_pairs.entry(a.pairs).or_default().push(a.total_ms);
        }
        let shown: Vec<String> = [5u64, 10, 20, 40, 80, 160, 320]
            .iter()
            .filter_map(|n| {
                let mut v = by_pairs.get(n)?.clone();
                v.sort_by(f64::total_cmp);
                Some(format!("{n}: {:.1} ms", quantile(&v, 0.5)))
            })
            .collect();
        if !shown.is_empty() {
            println!("analysis median by pairs per series: {}", shown.join(", "));
        }
    }
    println!(
        "server peak RSS (VmHWM): {:.0} MiB",
        peak_rss_kib as f64 / 1024.0
    );
}

/// `_sum` and `_count` of an OpenMetrics histogram.
fn histogram_sum_count(text: &str, name: &str) -> (f64, f64) {
    let value = |suffix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}_{suffix} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(f64::NAN)
    };
    (value("sum"), value("count"))
}

fn peak_rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/PID/status")
}

/// Registers `n` runners with `benchgate runner add` and returns their tokens.
fn register_runners(bin: &PathBuf, url: &str, n: usize) -> anyhow::Result<Vec<String>> {
    (0..n)
        .map(|i| {
            let out = Command::new(bin)
                .args(["runner", "add", &format!("scale-{i:03}"), "--labels", LABEL])
                .env("BENCHGATE_DATABASE_URL", url)
                .output()?;
            anyhow::ensure!(
                out.status.success(),
                "runner add: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)?
                .lines()
                .find_map(|l| l.strip_prefix("token: "))
                .map(|t| t.trim().to_owned())
                .context("runner add printed no token")
        })
        .collect()
}

/// One "comparison analysed" line of the server's log.
#[derive(Debug, Clone, Copy)]
struct Analysis {
    pairs: u64,
    total_ms: f64,
    read_ms: f64,
    store_ms: f64,
    /// Waiting for another analysis of the same comparison (not in `total_ms`; NaN from
    /// servers that do not log it).
    waited_ms: f64,
    /// An upload served by an analysis that began after it: nothing analysed.
    served: bool,
}

/// The server process; its log is read on a thread for the listen address and the analysis
/// lines.
struct ServerProcess {
    child: Child,
    addr: std::net::SocketAddr,
    analyses: Arc<Mutex<Vec<Analysis>>>,
}

impl ServerProcess {
    fn spawn(bin: &PathBuf, url: &str, extra_env: &[String]) -> anyhow::Result<Self> {
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
            .env("BENCHGATE_DATABASE_URL", url)
            .env("BENCHGATE_ADMIN_TOKEN", ADMIN)
            .env("BENCHGATE_LEASE_SECS", "600")
            // Measure slow requests instead of cutting them at the default 60 s.
            .env("BENCHGATE_REQUEST_TIMEOUT", "900")
            .env(
                "RUST_LOG",
                "warn,benchgate=info,benchgate_server::comparison_analysis=debug",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for kv in extra_env {
            let (k, v) = kv.split_once('=').context("--server-env KEY=VALUE")?;
            cmd.env(k, v);
        }
        let mut child = cmd.spawn()?;
        let stderr = child.stderr.take().context("stderr")?;
        let (tx, rx) = std::sync::mpsc::channel();
        let analyses = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&analyses);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                let fields = &v["fields"];
                match fields["message"].as_str() {
                    Some("benchgate listening") => {
                        let _ = tx.send(fields["addr"].as_str().unwrap_or_default().to_owned());
                    }
                    Some(
                        m
                        @ ("comparison analysed" | "comparison already analysed with this upload"),
                    ) => {
                        let ms = |k: &str| fields[k].as_f64().unwrap_or(f64::NAN);
                        sink.lock().unwrap().push(Analysis {
                            served: m != "comparison analysed",
                            pairs: fields["pairs"].as_u64().unwrap_or(0),
                            total_ms: ms("elapsed_ms"),
                            read_ms: ms("read_ms"),
                            store_ms: ms("store_ms"),
                            waited_ms: ms("waited_ms"),
                        });
                    }
                    // sqlx's "slow statement" warnings are the lock waits the latencies
                    // already show.
                    Some(m) if m.starts_with("slow statement") => {}
                    _ => {
                        if v["level"] == "ERROR" || v["level"] == "WARN" {
                            eprintln!("server: {line}");
                        }
                    }
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .context("the server did not start")?
            .parse()?;
        Ok(ServerProcess {
            child,
            addr,
            analyses,
        })
    }

    fn analysis_log(&self) -> Vec<Analysis> {
        // The log thread may be a line behind the last request.
        std::thread::sleep(Duration::from_millis(200));
        self.analyses.lock().unwrap().clone()
    }

    fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh SQLite file in the scratch directory, or a fresh Postgres database (dropped after).
struct FreshDatabase {
    url: String,
    postgres: Option<(String, String)>,
}

impl FreshDatabase {
    async fn create(cli: &Cli, dir: &std::path::Path) -> anyhow::Result<Self> {
        match cli.db {
            Db::Sqlite => Ok(FreshDatabase {
                url: format!("sqlite://{}", dir.join("scale.db").display()),
                postgres: None,
            }),
            Db::Postgres => {
                use sqlx::Connection as _;
                let admin = cli
                    .postgres
                    .clone()
                    .context("--db postgres needs --postgres or BENCHGATE_TEST_POSTGRES_URL")?;
                let name = format!("benchgate_scale_{}", std::process::id());
                let mut conn = sqlx::PgConnection::connect(&admin).await?;
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut conn)
                    .await?;
                let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
                Ok(FreshDatabase {
                    url: format!("{base}/{name}"),
                    postgres: Some((admin.clone(), name)),
                })
            }
        }
    }

    async fn drop_it(self) -> anyhow::Result<()> {
        if let Some((admin, name)) = self.postgres {
            use sqlx::Connection as _;
            let mut conn = sqlx::PgConnection::connect(&admin).await?;
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut conn)
            .await?;
        }
        Ok(())
    }
}
