//! `benchgate demo`: the whole loop on one machine with nothing set up — a throwaway git
//! repository whose head is slower by a known factor, the server on SQLite, one agent, an A/A
//! calibration, the comparison, and the PR comment exactly as it would be posted.

mod progress;
mod repo;
mod workload;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use benchgate_api::VerdictKind;
use benchgate_api::agent::{
    BenchmarkSpec, ComparisonConfig, ComparisonStatus, CreateComparisonRequest, CreatedComparison,
    GateSpec,
};
use benchgate_store::model::{JobState, NewJob, NewRepository, Priority};
use clap::Parser;

/// Flags of `benchgate demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Stop after printing the comment instead of keeping the dashboard up until Ctrl-C.
    #[arg(long)]
    pub exit: bool,
    /// Address of the demo's server and dashboard (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Keep the repository, database and agent work directory here (default: a temporary
    /// directory removed at exit).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// How much slower head is: it runs this many times the base's work.
    #[arg(long, default_value_t = 1.25)]
    pub factor: f64,
    /// Measured rounds of the comparison.
    #[arg(long, default_value_t = 12)]
    pub rounds: u32,
    /// Rounds the demo may add, as `/rebench` would, while the interval does not decide.
    #[arg(long, default_value_t = 60)]
    pub max_rounds: u32,
    /// Rounds of the A/A calibration run first.
    #[arg(long, default_value_t = 10)]
    pub calibration_rounds: u32,
    /// How long one base run should take, in milliseconds; the workload is sized on this
    /// machine so that a whole head run takes `--factor` times as long.
    #[arg(long, default_value_t = 100)]
    pub run_ms: u64,
    /// Also count each side's instructions, twice, as a suite's `counts = "instructions"`
    /// does (perf where this machine has a PMU, else Valgrind).
    #[arg(long, value_name = "COUNT", value_parser = |s: &str| s.parse::<benchgate_api::Counts>())]
    pub counts: Option<benchgate_api::Counts>,
    /// Which tier decides, as `[gate] gate_on`: `time`, `instructions` (needs --counts) or
    /// `both`.
    #[arg(long, value_name = "TIER", default_value = "time", value_parser = |s: &str| s.parse::<benchgate_api::GateOn>())]
    pub gate_on: benchgate_api::GateOn,
}

/// The runner label the demo's agent serves.
const LABEL: &str = "demo";

/// Runs the demo; the PR comment goes to stdout, progress and links to stderr.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    if !(args.factor > 0.0 && args.factor.is_finite()) {
        bail!("--factor must be a positive number, got {}", args.factor);
    }
    if args.gate_on.counts() && args.counts.is_none() {
        bail!("--gate-on {} needs --counts instructions", args.gate_on);
    }
    let temp;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("benchgate-demo-")
                .tempdir()?;
            temp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;

    let mut workload = workload::size(Duration::from_millis(args.run_ms), args.factor)?;
    if args.counts.is_some() {
        // Counted, the factor is one of work: start-up is the same few instructions on both
        // sides, so the count grows by the factor, where a time-sized head would count more.
        workload.head_iterations = (workload.base_iterations as f64 * args.factor).round() as u64;
    }
    let repo = repo::create(&dir, &workload)?;
    eprintln!(
        "demo repository {}: base runs the workload {} times, head {} (a whole head run {} ×{:.2})",
        repo.path.display(),
        workload.base_iterations,
        workload.head_iterations,
        if args.counts.is_some() {
            "does the work"
        } else {
            "takes as long"
        },
        args.factor
    );

    let admin_token = uuid::Uuid::new_v4().simple().to_string();
    let (stop_server, server_stopped) = tokio::sync::oneshot::channel::<()>();
    let server = benchgate_server::start(serve_args(&args, &dir, &admin_token), async move {
        let _ = server_stopped.await;
    })
    .await?;
    let base_url = format!("http://{}", server.addr);
    let store = server.state.store.clone();

    let runner = add_runner(&*store).await?;
    let (stop_agent, agent_shutdown) = benchgate_agent::Shutdown::manual();
    let token_file = write_token_file(&dir, runner.token.expose())?;
    let agent = tokio::spawn(benchgate_agent::run_until(
        agent_args(&base_url, &token_file, &dir),
        agent_shutdown,
    ));

    let repository = store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: None,
            full_name: repo.path.display().to_string(),
            clone_url: repo.path.display().to_string(),
            forge: benchgate_store::model::Forge::GitHub,
        })
        .await?;
    let config = ComparisonConfig {
        benchmark: BenchmarkSpec {
            build: None,
            run: "sh bench.sh".into(),
            format: "command".into(),
            rounds: args.rounds,
            warmup: 1,
            schedule: Default::default(),
            seed: None,
            timeout_secs: Some(60),
            env: Vec::new(),
            bench_from_head: Vec::new(),
            network: false,
            layout_salt: None,
            canary_work: false,
            counts: args.counts,
            count_run: None,
            ignore: Vec::new(),
            artifacts: Vec::new(),
            measure_secs: None,
            measure_auto: false,
            budget_secs: None,
        },
        gate: GateSpec {
            gate_on: args.gate_on,
            ..GateSpec::default()
        },
        suite: None,
        rules: Vec::new(),
    };

    // 1. The runner's noise floor: the base against itself.
    let mut aa_config = config.clone();
    aa_config.benchmark.rounds = args.calibration_rounds;
    let aa_job = benchgate_server::calibration::request_calibration(
        &server.state,
        runner.runner.id,
        repository.id,
        &repo.base_sha,
        LABEL,
        &aa_config.into(),
        Priority::INTERACTIVE,
    )
    .await?;
    progress::wait_for_calibration(&*store, aa_job, args.calibration_rounds, &agent).await?;
    for floor in store.runner_noise_floors(runner.runner.id).await? {
        if floor.key.metric == "wall_time" {
            eprintln!(
                "A/A floor of {}: spread ±{} per pair over {} pairs",
                runner.runner.name,
                benchgate_stats::words::spread(floor.within_spread.exp_m1() * 100.0),
                floor.pairs
            );
        }
    }

    // 2. The comparison, through the same API a script would use.
    let http = http_client();
    let created: CreatedComparison = http
        .post(format!("{base_url}/api/v1/comparisons"))
        .bearer_auth(&admin_token)
        .json(&CreateComparisonRequest {
            repository: repo.path.display().to_string(),
            base: repo.base_sha.clone(),
            head: repo.head_sha.clone(),
            runner_label: LABEL.into(),
            config,
            jobs: None,
        })
        .send()
        .await?
        .error_for_status()
        .context("requesting the comparison")?
        .json()
        .await?;
    let status_url = format!("{base_url}/api/v1/comparisons/{}", created.id);
    let id = benchgate_store::model::ComparisonId(created.id);
    let mut planned = args.rounds;
    loop {
        let status: ComparisonStatus =
            progress::wait_for_comparison(&http, &status_url, &admin_token, planned, &agent)
                .await?;
        if status.state != "done" {
            bail!(
                "the comparison ended {}; see {base_url}/comparisons/{}",
                status.state,
                created.id
            );
        }
        // Undecided: add rounds as a maintainer's `/rebench` would. The interval is valid at
        // every number of rounds, so asking again cannot manufacture a result.
        let undecided = headline_wall_time(&status)
            .filter(|row| row.verdict == VerdictKind::NoResultYet)
            .map(|row| row.rounds_needed.unwrap_or(u64::from(args.rounds)));
        let Some(needed) = undecided.filter(|_| args.gate_on.time()) else {
            break;
        };
        if planned >= args.max_rounds {
            break;
        }
        let more = (needed.clamp(2, u64::from(args.max_rounds - planned))) as u32;
        eprintln!(
            "no result yet after {planned} rounds: adding {more} (as `/rebench {more}` would)"
        );
        store
            .add_rounds(
                id,
                &[NewJob {
                    rounds: i64::from(more),
                    priority: Priority::INTERACTIVE,
                    max_attempts: 3,
                    origin: None,
                }],
            )
            .await?;
        planned += more;
    }

    // 3. The PR comment, exactly as it would be posted.
    let page = format!("{base_url}/comparisons/{}", created.id);
    let report = benchgate_server::report::load(&*store, id, page.clone())
        .await?
        .context("the finished comparison has no report")?;
    println!(
        "{}",
        benchgate_server::report::render_comment(&report.input)
    );

    eprintln!("\ndashboard: {base_url}/   this comparison: {page}");
    if !args.exit {
        eprintln!("press Ctrl-C to stop");
        benchgate_server::shutdown_signal().await;
    }
    stop_agent.request();
    let _ = agent.await;
    let _ = stop_server.send(());
    server.wait().await
}

/// The server's flags as `benchgate serve` would parse them, pointed at the demo's directory.
fn serve_args(
    args: &DemoArgs,
    dir: &std::path::Path,
    admin_token: &str,
) -> benchgate_server::ServeArgs {
    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: benchgate_server::ServeArgs,
    }
    let mut serve = Serve::parse_from([
        "serve".to_string(),
        "--listen".into(),
        args.listen.to_string(),
        "--database-url".into(),
        format!("sqlite://{}", dir.join("benchgate.db").display()),
        // The demo shows one comparison; a canary on its idle runner would only be noise.
        "--canary-every".into(),
        "off".into(),
    ])
    .args;
    // Set in memory: a secret is never a flag's value (`benchgate serve` refuses that).
    serve.admin_token = Some(admin_token.to_owned());
    serve
}

/// Writes the runner token where only this user can read it, as an operator would for
/// `--token-file`.
fn write_token_file(dir: &std::path::Path, token: &str) -> anyhow::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join("runner-token");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The agent's flags as `benchgate agent` would parse them.
fn agent_args(
    server: &str,
    token_file: &std::path::Path,
    dir: &std::path::Path,
) -> benchgate_agent::AgentArgs {
    #[derive(Parser)]
    struct Agent {
        #[command(flatten)]
        args: benchgate_agent::AgentArgs,
    }
    Agent::parse_from([
        "agent".to_string(),
        "--server".into(),
        server.into(),
        "--token-file".into(),
        token_file.display().to_string(),
        "--work-dir".into(),
        dir.join("agent").display().to_string(),
        "--labels".into(),
        LABEL.into(),
    ])
    .args
}

/// Registers this machine as the demo's runner (a fresh name when `--dir` is reused).
async fn add_runner(
    store: &dyn benchgate_store::Store,
) -> anyhow::Result<benchgate_store::model::NewRunner> {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "local".into());
    for n in 1..100 {
        let name = if n == 1 {
            host.clone()
        } else {
            format!("{host}-{n}")
        };
        match store.add_runner(&name, &[LABEL.to_string()]).await {
            Ok(runner) => return Ok(runner),
            Err(benchgate_store::StoreError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    bail!("could not find a free runner name")
}

/// An HTTP client for the demo's own server (plain HTTP on loopback).
fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// The wall-time result of the runner whose series is the comparison's headline.
fn headline_wall_time(status: &ComparisonStatus) -> Option<&benchgate_api::BenchmarkResult> {
    status
        .runners
        .iter()
        .find(|r| r.headline)
        .and_then(|r| r.report.benchmarks.iter().find(|b| b.metric == "wall_time"))
}

/// Whether a job has ended, for the progress loops.
fn finished(state: JobState) -> bool {
    matches!(
        state,
        JobState::Done | JobState::Failed | JobState::Cancelled
    )
}
