//! Helpers for the agent end-to-end tests: a real git repository whose head is slower by a known
//! factor, runners registered with `benchgate runner add`, `benchgate agent` processes, the
//! server on a fixed port (to restart it), and the admin comparison API.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use benchgate_api::agent::{
    BenchmarkSpec, ComparisonConfig, ComparisonStatus, CreateComparisonRequest, CreatedComparison,
    GateSpec, ScheduleKind,
};
use benchgate_store::{ComparisonId, RunnerSeries};

use crate::support::{BIN, Server, git, http, wait_until};

/// The admin token every test server gets.
pub const ADMIN: &str = "admin-token-for-agent-tests";
/// The runner label of every test job.
pub const LABEL: &str = "e2e";
/// How long a test waits for an agent's comparison to finish, on a loaded machine too.
pub const FINISH: Duration = Duration::from_secs(90);

/// Spin iterations of the base side (~20 ms per run in a debug build).
pub const BASE_ITERATIONS: u64 = 2_500_000;
/// Head is slower by a known factor: three times the work (the process start-up is shared).
pub const HEAD_ITERATIONS: u64 = 7_500_000;

/// A local git repository with a benchmark script and two commits: base and head.
pub struct BenchRepo {
    pub path: PathBuf,
    pub base: String,
    pub head: String,
}

impl BenchRepo {
    /// Creates the repository under `dir`: `bench.sh` spins `$(cat iterations)` times and,
    /// when `ENV_DUMP` is set, appends its environment there.
    pub fn create(dir: &Path) -> BenchRepo {
        let path = dir.join("project");
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(
            path.join("bench.sh"),
            "#!/bin/sh\n\
             if [ -n \"$ENV_DUMP\" ]; then env >> \"$ENV_DUMP\"; fi\n\
             if [ -n \"$PAUSE\" ]; then sleep \"$PAUSE\"; fi\n\
             exec \"$BENCHGATE_BIN\" spin --iterations \"$(cat iterations)\"\n",
        )
        .unwrap();
        std::fs::write(path.join(".gitignore"), "build.out\n").unwrap();
        std::fs::write(path.join("iterations"), BASE_ITERATIONS.to_string()).unwrap();
        git(&path, &["init", "-q"]);
        git(&path, &["add", "."]);
        git(&path, &["commit", "-qm", "base"]);
        let base = git(&path, &["rev-parse", "HEAD"]);
        std::fs::write(path.join("iterations"), HEAD_ITERATIONS.to_string()).unwrap();
        git(&path, &["commit", "-qam", "head: more work"]);
        let head = git(&path, &["rev-parse", "HEAD"]);
        BenchRepo { path, base, head }
    }

    /// A comparison request of base against head, `rounds` rounds, one job.
    pub fn comparison(&self, rounds: u32, env: Vec<String>) -> CreateComparisonRequest {
        let mut env = env;
        env.push(format!("BENCHGATE_BIN={BIN}"));
        CreateComparisonRequest {
            repository: self.path.to_string_lossy().into_owned(),
            base: self.base.clone(),
            head: self.head.clone(),
            runner_label: LABEL.into(),
            config: ComparisonConfig {
                benchmark: BenchmarkSpec {
                    build: Some("env > build.out".into()),
                    run: "sh bench.sh".into(),
                    format: "command".into(),
                    rounds,
                    warmup: 1,
                    schedule: ScheduleKind::Abba,
                    seed: None,
                    timeout_secs: Some(60),
                    env,
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
}

/// The last error of each job of comparison `id` with its log tail, as the agent reported them.
pub async fn job_errors(database_url: &str, id: i64) -> Vec<String> {
    use sqlx::Connection;
    let mut c = sqlx::SqliteConnection::connect(database_url).await.unwrap();
    sqlx::query_scalar::<_, Option<String>>(
        "SELECT COALESCE(last_error, '') || char(10) || COALESCE(log_tail, '') FROM jobs \
         WHERE comparison_id = ? ORDER BY id",
    )
    .bind(id)
    .fetch_all(&mut c)
    .await
    .unwrap()
    .into_iter()
    .flatten()
    .collect()
}

/// Whether bwrap works here; `false` with the reason printed (a failure in CI).
pub fn bwrap_works() -> bool {
    match benchgate_harness::sandbox::Sandbox::from_path().and_then(|s| s.probe()) {
        Ok(()) => true,
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("bubblewrap must work in CI (.ci/run installs it): {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// Registers a runner labelled [`LABEL`] with `benchgate runner add` and returns the token it
/// printed once.
pub fn add_runner(database_url: &str, name: &str) -> String {
    add_runner_with_labels(database_url, name, LABEL)
}

/// [`add_runner`] with other `labels` (comma-separated).
pub fn add_runner_with_labels(database_url: &str, name: &str, labels: &str) -> String {
    let out = runner_cli(database_url, &["add", name, "--labels", labels]);
    assert!(
        out.contains("BENCHGATE_TOKEN"),
        "says where the token goes: {out}"
    );
    out.lines()
        .find_map(|l| l.strip_prefix("token: "))
        .expect("a token line")
        .trim()
        .to_owned()
}

/// Runs `benchgate runner ARGS…` on the database and returns its stdout.
pub fn runner_cli(database_url: &str, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("runner")
        .args(args)
        .env("BENCHGATE_DATABASE_URL", database_url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "runner {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Starts `benchgate serve` listening on `listen` (e.g. `127.0.0.1:0`, or a port reused after a
/// restart) with the admin token and a lease of `lease_secs`.
pub fn spawn_server_at(listen: &str, database_url: &str, lease_secs: u64) -> Server {
    let lease = lease_secs.to_string();
    crate::support::spawn_server_on(
        listen,
        database_url,
        &[
            ("BENCHGATE_ADMIN_TOKEN", ADMIN),
            ("BENCHGATE_LEASE_SECS", &lease),
            // Short long-polls, so an agent notices a revoked token within seconds.
            ("BENCHGATE_CLAIM_WAIT", "2"),
        ],
    )
}

/// How a test agent gets its runner token; never `--token` on the command line.
pub enum TokenVia<'a> {
    /// `BENCHGATE_TOKEN` in its environment.
    Env(&'a str),
    /// `--token-file PATH`.
    File(&'a Path),
}

/// Writes `token` (with a newline, as an editor would) to `path` with `mode`.
pub fn write_token_file(path: &Path, token: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("{token}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A running `benchgate agent`; killed on drop. Its stderr is kept for assertion messages.
pub struct AgentProcess {
    pub name: String,
    pub child: Child,
    logs: Arc<Mutex<Vec<String>>>,
    /// Copies stderr into `logs`; finished once the agent's stderr is closed.
    log_reader: JoinHandle<()>,
}

impl AgentProcess {
    /// Starts an agent with its token in the environment (as an operator would), a secret of
    /// the machine beside it, and `extra` flags.
    pub fn spawn(name: &str, server: &Server, token: &str, dir: &Path, extra: &[&str]) -> Self {
        Self::spawn_with(name, &server.url(""), TokenVia::Env(token), dir, extra)
    }

    /// Starts an agent of the server at `server_url` that gets its token `via` the
    /// environment or a file.
    pub fn spawn_with(
        name: &str,
        server_url: &str,
        via: TokenVia<'_>,
        dir: &Path,
        extra: &[&str],
    ) -> Self {
        Self::spawn_with_env(name, server_url, via, dir, extra, &[])
    }

    /// [`AgentProcess::spawn_with`] with more environment variables (`HOME`, say).
    pub fn spawn_with_env(
        name: &str,
        server_url: &str,
        via: TokenVia<'_>,
        dir: &Path,
        extra: &[&str],
        env: &[(&str, &Path)],
    ) -> Self {
        let work_dir = dir.join(format!("agent-{name}"));
        let mut cmd = Command::new(BIN);
        cmd.args(["agent", "--server", server_url, "--work-dir"])
            .arg(&work_dir)
            .args(["--max-backoff", "1"])
            .args(extra)
            .env_remove("BENCHGATE_TOKEN")
            .env_remove("BENCHGATE_TOKEN_FILE");
        match via {
            TokenVia::Env(token) => cmd.env("BENCHGATE_TOKEN", token),
            TokenVia::File(path) => cmd.arg("--token-file").arg(path),
        };
        for (name, value) in env {
            cmd.env(name, value);
        }
        let mut child = cmd
            .env("AWS_SECRET_ACCESS_KEY", "machine-secret-never-passed")
            .env("RUST_LOG", "info,benchgate_agent=debug")
            // Plain log lines, so tests can look for `round=1`.
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn benchgate agent");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&logs);
        let log_reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        AgentProcess {
            name: name.to_owned(),
            child,
            logs,
            log_reader,
        }
    }

    /// After the agent exited: waits until its last log line was read. Bounded, as a process
    /// the agent started could still hold its stderr open.
    fn read_last_logs(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.log_reader.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything the agent logged so far.
    pub fn logs(&self) -> String {
        self.logs.lock().unwrap().join("\n")
    }

    /// Whether the agent logged a line containing `needle`.
    pub fn logged(&self, needle: &str) -> bool {
        self.logs.lock().unwrap().iter().any(|l| l.contains(needle))
    }

    /// Waits until the agent logs `needle`.
    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.logged(needle) {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.read_last_logs();
                panic!(
                    "agent {} exited ({status}) before logging {needle:?}; its log:\n{}",
                    self.name,
                    self.logs()
                );
            }
            assert!(
                Instant::now() < deadline,
                "agent {} never logged {needle:?}; its log:\n{}",
                self.name,
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends a signal (`TERM`, `KILL`) to the agent process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The largest resident set the agent process has had (`VmHWM`), in bytes.
    pub fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("VmHWM in /proc/PID/status")
            * 1024
    }

    /// The process's command line as the kernel shows it to every local user.
    pub fn cmdline(&self) -> String {
        let raw = std::fs::read(format!("/proc/{}/cmdline", self.child.id())).unwrap();
        String::from_utf8_lossy(&raw).replace('\0', " ")
    }

    /// Waits for the agent to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.read_last_logs();
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "agent {} did not exit; its log:\n{}",
                self.name,
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Requests a comparison through the admin API.
pub async fn create_comparison(
    server: &Server,
    req: &CreateComparisonRequest,
) -> CreatedComparison {
    let resp = http()
        .post(server.url("/api/v1/comparisons"))
        .bearer_auth(ADMIN)
        .json(req)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert_eq!(status.as_u16(), 201, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Reads a comparison's state and results through the admin API.
pub async fn comparison(server: &Server, id: i64) -> ComparisonStatus {
    let resp = http()
        .get(server.url(&format!("/api/v1/comparisons/{id}")))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert_eq!(status.as_u16(), 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// Polls the comparison until it is finished (done, failed, cancelled…) and returns it.
pub async fn wait_finished(
    server: &Server,
    id: i64,
    timeout: Duration,
    agents: &[&AgentProcess],
) -> ComparisonStatus {
    let what = format!("comparison {id} to finish");
    wait_until(&what, timeout, async || {
        let status = comparison(server, id).await;
        if !matches!(status.state.as_str(), "queued" | "running") {
            return Ok(status);
        }
        let logs: Vec<String> = agents
            .iter()
            .map(|a| format!("--- {}:\n{}", a.name, a.logs()))
            .collect();
        Err(format!("{}\n{}", status.state, logs.join("\n")))
    })
    .await
}

/// Every stored sample of a comparison, per runner.
pub async fn comparison_samples(database_url: &str, id: i64) -> Vec<RunnerSeries> {
    let store = benchgate_store::connect(database_url).await.unwrap();
    store.comparison_samples(ComparisonId(id)).await.unwrap()
}

/// The (attempt, round) pairs of the head's wall time a runner stored; asserts that no sample
/// (job, attempt, round, side, benchmark, metric) was stored twice.
pub fn wall_time_rounds(series: &RunnerSeries) -> BTreeSet<(i64, i64)> {
    let mut seen = BTreeMap::new();
    for s in &series.samples {
        let key = (
            s.job_id.0,
            s.attempt,
            s.round,
            s.side,
            s.benchmark.clone(),
            s.metric.clone(),
        );
        *seen.entry(key).or_insert(0) += 1;
    }
    assert!(
        seen.values().all(|&n| n == 1),
        "a sample was stored twice: {seen:?}"
    );
    series
        .samples
        .iter()
        .filter(|s| s.metric == "wall_time" && s.side == benchgate_api::Side::Head)
        .map(|s| (s.attempt, s.round))
        .collect()
}
