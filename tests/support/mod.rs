//! Helpers for end-to-end tests: the real binary on a real port, fresh databases.

pub mod agent;
pub mod dashboard_seed;

use std::fmt::Display;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_benchgate");

/// Polls `check` until it answers `Ok` and returns that value: every 50 ms at first, then less
/// often, up to every 500 ms, so a wait of minutes stays light. After `within` it panics naming
/// `what` was awaited and showing the last `Err`: what was seen instead.
pub async fn wait_until<T, E: Display>(
    what: &str,
    within: Duration,
    mut check: impl AsyncFnMut() -> Result<T, E>,
) -> T {
    let deadline = Instant::now() + within;
    let mut pause = Duration::from_millis(50);
    loop {
        let seen = match check().await {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        if Instant::now() >= deadline {
            panic!("timed out after {within:?} waiting for {what}; last seen: {seen}");
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 3 / 2).min(Duration::from_millis(500));
    }
}

/// Tests that measure take turns, whichever file they are in: side by side on a small machine
/// they would load each other and measure that instead of the code. Hold the guard while
/// measuring, or while loading the machine as heavily (a browser).
static MEASURING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A test's turn to measure, until dropped: the lock of this test binary and a lock file that
/// test processes run side by side (nextest runs each test in its own) take turns on too.
pub struct Turn {
    _in_process: tokio::sync::MutexGuard<'static, ()>,
    _across_processes: std::fs::File,
}

/// The lock file every test process takes its turn on, locked (the lock goes with the file).
fn lock_across_processes() -> std::fs::File {
    let path = std::env::temp_dir().join("benchgate-tests-measuring.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("locking {}: {e}", path.display()));
    file
}

/// Waits for this test's turn to measure.
pub async fn measuring_turn() -> Turn {
    let in_process = MEASURING.lock().await;
    let file = tokio::task::spawn_blocking(lock_across_processes)
        .await
        .expect("the lock file's task");
    Turn {
        _in_process: in_process,
        _across_processes: file,
    }
}

/// [`measuring_turn`] for a test that runs outside a tokio runtime.
pub fn measuring_turn_blocking() -> Turn {
    let in_process = MEASURING.blocking_lock();
    Turn {
        _in_process: in_process,
        _across_processes: lock_across_processes(),
    }
}

/// The URL of the SQLite database `benchgate.db` in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("benchgate.db").display())
}

/// Runs git in `dir` with a fixed identity (test machines may have none) and returns stdout.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// An HTTP client for tests; installs the process-wide TLS crypto provider reqwest needs.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A running `benchgate serve` process; killed on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// Log lines the server wrote after it started listening.
    pub logs: mpsc::Receiver<String>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id() as i32;
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill");
        let status = self.child.wait().expect("wait");
        std::mem::forget(self);
        status
    }

    /// Waits until the server logs a line containing `needle`; returns the lines read meanwhile,
    /// that one last.
    pub fn wait_for_log(&self, needle: &str, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.logs.recv_timeout(left) else {
                panic!("the server did not log {needle:?} within {within:?}; it logged {seen:#?}");
            };
            let found = line.contains(needle);
            seen.push(line);
            if found {
                return seen;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `benchgate serve` on port 0 with `database_url` and extra environment, and waits
/// until it logs the address it listens on.
pub fn spawn_server(database_url: &str, env: &[(&str, &str)]) -> Server {
    spawn_server_on("127.0.0.1:0", database_url, env)
}

/// Like [`spawn_server`] on a given address (e.g. a port reused after a restart).
pub fn spawn_server_on(listen: &str, database_url: &str, env: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", listen, "--log-format", "json"])
        .env("BENCHGATE_DATABASE_URL", database_url)
        .env("RUST_LOG", "info")
        // Canaries on idle runners would add jobs to every test; the tests of canaries ask.
        .env("BENCHGATE_CANARY_EVERY", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn benchgate serve");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                if let Some(addr) = listening_addr(&line) {
                    return Server {
                        child,
                        addr,
                        logs: rx,
                    };
                }
                seen.push(line);
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("server did not start; its output:\n{}", seen.join("\n"));
            }
        }
    }
}

fn listening_addr(line: &str) -> Option<SocketAddr> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v["fields"]["message"] != "benchgate listening" {
        return None;
    }
    v["fields"]["addr"].as_str()?.parse().ok()
}

/// The admin URL of the test Postgres server, or None (with the reason printed) when unset.
/// In CI a missing URL is a failure, so Postgres tests never skip silently there.
pub fn postgres_admin_url() -> Option<String> {
    match std::env::var("BENCHGATE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var_os("CI").is_some() {
                panic!("BENCHGATE_TEST_POSTGRES_URL is not set in CI; Postgres tests must run");
            }
            eprintln!("skipping: BENCHGATE_TEST_POSTGRES_URL is not set");
            None
        }
    }
}

/// A fresh, empty Postgres database for one test; dropped with the value.
pub struct FreshPostgres {
    pub url: String,
    admin_url: String,
    name: String,
}

impl FreshPostgres {
    pub fn create(admin_url: &str) -> FreshPostgres {
        let name = format!("benchgate_e2e_{}", uuid_like());
        psql(admin_url, &format!("CREATE DATABASE {name}"));
        let base = admin_url
            .rsplit_once('/')
            .map(|(b, _)| b)
            .unwrap_or(admin_url);
        FreshPostgres {
            url: format!("{base}/{name}"),
            admin_url: admin_url.to_string(),
            name,
        }
    }
}

impl Drop for FreshPostgres {
    fn drop(&mut self) {
        psql(
            &self.admin_url,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

fn psql(url: &str, sql: &str) {
    // A thread of its own, so this works from sync tests and from inside a tokio runtime.
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to test Postgres: {e}"));
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                .execute(&mut conn)
                .await
                .expect(&sql);
        });
    })
    .join()
    .expect("test Postgres statement failed");
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}_{}", std::process::id(), nanos % 1_000_000_000_000)
}
