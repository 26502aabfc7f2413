//! A soak with faults (docs/reliability.md): two servers on one Postgres, three agents, and a
//! stream of signed webhooks for several pull requests (opens, pushes, `/rebench`), while every
//! 20–60 s a random fault hits: `kill -9` of a server or an agent, the database connections
//! stalled behind a proxy, GitHub answering errors or a rate limit for a while, an agent's work
//! dir full, and (when asked) a Postgres restart. At the end it checks and prints: every delivery
//! GitHub saw accepted is recorded, every round an agent uploaded is stored and none twice, every
//! PR's comparison ended with the verdict its modelled change gives, one comment per PR, no
//! write GitHub would refuse, and each process's memory.
//!
//! One of the six PRs is hostile: its heads, in turn, hog memory, fork without end, leave a
//! daemon, leave a `.git` with a hook in their tree and leave a poisoned cache for the next PR. The agents run PR code as shipped (`--sandbox auto`, memory and process limits), so
//! each of its comparisons must fail with the limit named while the other PRs' verdicts stay
//! right, and none of its processes may outlive the soak.
//!
//! Not part of the normal run (`#[ignore]`); the figures in docs/reliability.md come from
//!
//! ```text
//! BENCHGATE_SOAK_SECS=3600 BENCHGATE_SOAK_RESTART_POSTGRES=1 \
//!   BENCHGATE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo test --test integration -- --ignored --nocapture soak
//! ```
//!
//! (2 minutes without `BENCHGATE_SOAK_SECS`; the Postgres restart hits every database of the
//! cluster, so it is only on when asked and no other test runs.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ADMIN_TOKEN, SECRET, count_rows, nothing_refused, post};
use crate::github::{self, Calls, FakeGitHub, Fault, REPO, fixture};
use crate::support::agent::{AgentProcess, TokenVia, add_runner_with_labels};
use crate::support::{
    BIN, FreshPostgres, Server, git, postgres_admin_url, spawn_server_on, wait_until,
};
use benchgate_github::signature::sign_with;

const LABEL: &str = "soak";
/// Each PR's heads do this much of base's work: 1.5 (slower), 1.0 (no change) or 0.7 (faster).
/// The last is the hostile PR.
const FACTORS: [f64; 6] = [1.5, 1.0, 0.7, 1.5, 1.0, 1.0];
const HOSTILE: usize = 5;
const BASE_ITERATIONS: f64 = 2_000_000.0;
/// What the agents allow one run (the hostile PR's attacks meet these).
const LIMIT_MEMORY: &str = "256MiB";
const LIMIT_PROCESSES: &str = "128";

/// Where the hostile PR's git hook would leave its mark, run by an agent outside the sandbox.
fn hooked_mark(marker: &str) -> PathBuf {
    std::env::temp_dir().join(format!("benchgate-soak-hooked.{marker}"))
}

/// The hostile PR's heads, one per push in turn: (name, `attack.sh`, what the job's error says).
/// Each attack's processes carry a marker unique to this soak, so survivors can be found. The
/// last two leave something in their tree for whatever runs there next, then fail: a `.git` with
/// a hook (run by an agent that checks out in that tree, outside the sandbox) and a poisoned
/// `cache/` that the next PR's runs would read (as a build reads `target/`).
fn attacks(marker: &str) -> [(&'static str, String, &'static str); 5] {
    [
        (
            "memory hog",
            "exec perl -e 'my @a; for (1 .. 65536) { push @a, \"x\" x (1 << 20) }'".to_owned(),
            "stopped at the memory limit (256 MiB",
        ),
        (
            "fork bomb",
            format!("i=0; while [ $i -lt 1000 ]; do sleep 300.{marker} & i=$((i+1)); done; wait"),
            "reached the process limit (128",
        ),
        (
            "daemon",
            format!("setsid sleep 301.{marker} < /dev/null > /dev/null 2>&1 &"),
            "left 1 process(es) running after it ended",
        ),
        (
            "git hook",
            format!(
                "rm -rf .git && mkdir -p .git/hooks .git/objects/info .git/refs/heads && \
                 echo 'ref: refs/heads/main' > .git/HEAD && \
                 echo \"$PWD/../mirror.git/objects\" > .git/objects/info/alternates && \
                 printf '#!/bin/sh\\ntouch {}\\n' > .git/hooks/post-checkout && \
                 chmod +x .git/hooks/post-checkout; exit 43",
                hooked_mark(marker).display()
            ),
            "(exit code 43",
        ),
        (
            "cache poison",
            "mkdir -p cache && echo 1000 > cache/iterations; exit 44".to_owned(),
            "(exit code 44",
        ),
    ]
}

/// A small deterministic generator, so a soak is replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn secs(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(1000 * from + self.below(1000 * (to - from) + 1))
    }
}

/// One PR of the soak: its number, its heads (each push moves it to the next) and the factor
/// every head applies to base's work; a hostile PR's heads each run one attack first.
struct Pr {
    number: u64,
    heads: Vec<String>,
    factor: f64,
    hostile: bool,
    opened: bool,
    /// The head it is at: the index into `heads`.
    at: usize,
}

fn soak_project(dir: &Path, marker: &str) -> (PathBuf, String, Vec<Pr>) {
    let path = dir.join("project");
    std::fs::create_dir_all(&path).unwrap();
    git(&path, &["init", "-q", "-b", "main"]);
    std::fs::write(
        path.join("iterations"),
        (BASE_ITERATIONS as u64).to_string(),
    )
    .unwrap();
    git(&path, &["add", "."]);
    git(&path, &["commit", "-qm", "base"]);
    let base = git(&path, &["rev-parse", "HEAD"]);
    let mut prs = Vec::new();
    for (i, factor) in FACTORS.iter().enumerate() {
        let number = 100 + i as u64;
        let hostile = i == HOSTILE;
        let attacks = attacks(marker);
        // The hostile PR moves through its attacks three times over.
        let pushes = if hostile { 3 * attacks.len() } else { 2 };
        let mut heads = Vec::new();
        for push in 0..pushes {
            git(&path, &["checkout", "-q", "--detach", &base]);
            let work = (BASE_ITERATIONS * factor) as u64;
            std::fs::write(path.join("iterations"), work.to_string()).unwrap();
            std::fs::write(path.join("NOTES"), format!("PR {number}, push {push}\n")).unwrap();
            if hostile {
                std::fs::write(path.join("attack.sh"), &attacks[push % attacks.len()].1).unwrap();
            }
            git(&path, &["add", "."]);
            git(
                &path,
                &["commit", "-qm", &format!("PR {number} push {push}")],
            );
            heads.push(git(&path, &["rev-parse", "HEAD"]));
        }
        prs.push(Pr {
            number,
            heads,
            factor: *factor,
            hostile,
            opened: false,
            at: 0,
        });
    }
    git(&path, &["checkout", "-q", "main"]);
    (path, base, prs)
}

fn soak_config() -> String {
    format!(
        "[benchmark]\nrun = \"if [ -f attack.sh ]; then sh attack.sh || exit $?; fi; \
         exec {BIN} spin --iterations $(cat cache/iterations 2>/dev/null || cat iterations) \
         --modelled-spread 0.01\"\n\
         format = \"libtest\"\nrounds = 8\nwarmup = 1\nrunner = \"{LABEL}\"\n\n\
         [[benchmark.rule]]\nmatch = \"*\"\nmetric = \"time\"\n\n\
         [gate]\nrare_slow_runs = \"off\"\nfail_on = \"regression\"\nmin_effect = \"5%\"\n"
    )
}

/// A delivery GitHub sends: event, id, payload.
type Delivery = (&'static str, String, Value);

fn pr_event(path: &Path, base: &str, pr: &Pr, action: &str, head: &str) -> Value {
    let mut p = fixture("webhooks/pull_request.opened.json");
    let clone = path.to_string_lossy().into_owned();
    p["action"] = json!(action);
    p["number"] = json!(pr.number);
    p["pull_request"]["number"] = json!(pr.number);
    p["pull_request"]["base"]["repo"]["clone_url"] = json!(clone);
    p["pull_request"]["head"]["repo"]["clone_url"] = json!(clone);
    p["repository"]["clone_url"] = json!(clone);
    p["pull_request"]["base"]["sha"] = json!(base);
    p["pull_request"]["head"]["sha"] = json!(head);
    p["installation"] = json!({"id": 1});
    p
}

fn rebench(github: &FakeGitHub, path: &Path, pr: u64, id: u64) -> Value {
    github.add_comment_with_id(id, pr, "Codertocat", "/rebench");
    let mut c = fixture("webhooks/issue_comment.created.on-pr.slash-command.json");
    c["repository"]["full_name"] = json!(REPO);
    c["repository"]["clone_url"] = json!(path.to_string_lossy());
    c["installation"] = json!({"id": 1});
    c["comment"]["created_at"] = json!(chrono::Utc::now().to_rfc3339());
    c["issue"]["number"] = json!(pr);
    c["comment"]["id"] = json!(id);
    c["comment"]["body"] = json!("/rebench");
    c["comment"]["user"]["login"] = json!("Codertocat");
    c["comment"]["author_association"] = json!("OWNER");
    c
}

/// One text value of a query, on Postgres or SQLite.
async fn text_row(database_url: &str, sql: &str) -> String {
    use sqlx::Connection;
    let sql = sqlx::AssertSqlSafe(sql.to_owned());
    if database_url.starts_with("postgres") {
        let mut c = sqlx::PgConnection::connect(database_url).await.unwrap();
        sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
    } else {
        let mut c = sqlx::SqliteConnection::connect(database_url).await.unwrap();
        sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
    }
}

/// Resident memory of process `pid` in MiB, if it runs.
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// The servers, their fixed addresses (a restart takes the same port) and environment.
struct Servers {
    running: [Option<Server>; 2],
    listen: [String; 2],
    database_url: String,
    env: Vec<(String, String)>,
}

impl Servers {
    fn start(&mut self, i: usize) {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.running[i] = Some(spawn_server_on(&self.listen[i], &self.database_url, &env));
    }

    fn url(&self, i: usize, path: &str) -> String {
        format!("http://{}{path}", self.listen[i])
    }
}

/// The agents, with every log line of their earlier (killed) processes kept.
struct Agents {
    running: Vec<Option<AgentProcess>>,
    tokens: Vec<String>,
    servers: Vec<String>,
    dir: PathBuf,
    old_logs: Vec<String>,
}

impl Agents {
    fn start(&mut self, i: usize) {
        self.running[i] = Some(AgentProcess::spawn_with(
            &format!("soak-{i}"),
            &self.servers[i],
            TokenVia::Env(&self.tokens[i]),
            &self.dir,
            // As shipped: sandboxed, failing closed without bubblewrap, and limited.
            &[
                "--sandbox",
                "auto",
                "--limit-memory",
                LIMIT_MEMORY,
                "--limit-processes",
                LIMIT_PROCESSES,
                "--labels",
                LABEL,
            ],
        ));
    }

    fn kill(&mut self, i: usize) {
        if let Some(agent) = self.running[i].take() {
            agent.signal("KILL");
            let mut agent = agent;
            agent.wait_exit(Duration::from_secs(30));
            self.old_logs.push(agent.logs());
        }
    }

    fn all_logs(&self) -> String {
        let mut all = self.old_logs.join("\n");
        for agent in self.running.iter().flatten() {
            all.push('\n');
            all.push_str(&agent.logs());
        }
        all
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a soak: run it on purpose (docs/reliability.md)"]
async fn soak_with_faults() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let secs: u64 = std::env::var("BENCHGATE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let restart_postgres = std::env::var("BENCHGATE_SOAK_RESTART_POSTGRES").is_ok_and(|v| v == "1");
    let seed: u64 = std::env::var("BENCHGATE_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2026);
    let mut rng = Rng(seed | 1);
    // Faults every 20–60 s; a short soak packs them closer so each kind happens.
    let (gap_from, gap_to) = if secs >= 900 { (20, 60) } else { (6, 15) };
    // The hostile PR's pushes spread over the soak (1 in `hostile_odds` of its deliveries).
    let hostile_odds = if secs >= 900 { 30 } else { 2 };
    let marker = std::process::id().to_string();
    let attacks = attacks(&marker);

    let _turn = crate::support::measuring_turn().await;
    let pg = FreshPostgres::create(&admin);
    let (prefix, rest) = pg.url.rsplit_once('@').unwrap();
    let (host_port, name) = rest.split_once('/').unwrap();
    let proxy = crate::faults::HangingProxy::start(host_port.to_owned()).await;
    let via_proxy = format!("{prefix}@127.0.0.1:{}/{name}", proxy.port);

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (path, base, mut prs) = soak_project(dir.path(), &marker);
    let github = FakeGitHub::start(Some(&soak_config())).await;
    github.serve_repository(&path);
    let key = github::app_key_file();
    let free_port = || {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let env = [
        ("BENCHGATE_WEBHOOK_SECRET", SECRET.to_owned()),
        ("BENCHGATE_GITHUB_API_URL", github.url()),
        ("BENCHGATE_GITHUB_APP_ID", github::APP_ID.to_string()),
        (
            "BENCHGATE_GITHUB_PRIVATE_KEY_FILE",
            key.to_string_lossy().into_owned(),
        ),
        ("BENCHGATE_PUBLIC_URL", "https://bench.example".to_owned()),
        ("BENCHGATE_COMMENT_INTERVAL", "1".to_owned()),
        ("BENCHGATE_OUTBOX_BACKOFF_MS", "200".to_owned()),
        ("BENCHGATE_CLAIM_WAIT", "2".to_owned()),
        ("BENCHGATE_ADMIN_TOKEN", ADMIN_TOKEN.to_owned()),
        ("BENCHGATE_PROFILE_RUNS", "0".to_owned()),
        // Killed agents and a full disk fail attempts; the jobs must still end done.
        ("BENCHGATE_MAX_ATTEMPTS", "20".to_owned()),
        ("BENCHGATE_LEASE_SECS", "15".to_owned()),
    ];
    let mut servers = Servers {
        running: [None, None],
        listen: [free_port(), free_port()],
        database_url: via_proxy.clone(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    };
    servers.start(0);
    servers.start(1);
    let tokens: Vec<String> = (0..3)
        .map(|i| add_runner_with_labels(&pg.url, &format!("soak-{i}"), LABEL))
        .collect();
    let mut agents = Agents {
        running: (0..3).map(|_| None).collect(),
        tokens,
        servers: (0..3).map(|i| servers.url(i % 2, "")).collect(),
        dir: dir.path().to_path_buf(),
        old_logs: Vec::new(),
    };
    // Agent 2's work dir is a small file system of its own, so its disk can be filled.
    let small_disk = dir.path().join("agent-soak-2");
    std::fs::create_dir_all(&small_disk).unwrap();
    let disk = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256m", "tmpfs"])
        .arg(&small_disk)
        .status()
        .is_ok_and(|s| s.success());
    for i in 0..3 {
        agents.start(i);
    }
    // Memory once every process is up and idle.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let rss_start: Vec<(String, Option<f64>)> = servers
        .running
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                format!("server {i}"),
                rss_mib(s.as_ref().unwrap().child.id()),
            )
        })
        .chain(agents.running.iter().enumerate().map(|(i, a)| {
            (
                format!("agent {i}"),
                a.as_ref().and_then(|a| rss_mib(a.child.id())),
            )
        }))
        .collect();

    let mut acked: BTreeSet<String> = BTreeSet::new();
    let mut unsent: Vec<Delivery> = Vec::new();
    let mut faults: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut next_fault = Instant::now() + rng.secs(gap_from, gap_to);
    let mut deliveries = 0u64;
    let mut comment_id = 90_000u64;
    while Instant::now() < deadline {
        // A delivery: the next step of a random PR, or a redelivery of one that was not taken.
        let delivery: Delivery = if !unsent.is_empty() && rng.below(3) == 0 {
            unsent.remove(0)
        } else {
            deliveries += 1;
            let id = format!("soak-{deliveries}");
            let pr = &mut prs[rng.below(FACTORS.len() as u64) as usize];
            if !pr.opened {
                pr.opened = true;
                (
                    "pull_request",
                    id,
                    pr_event(&path, &base, pr, "opened", &pr.heads[0]),
                )
            } else if pr.at + 1 < pr.heads.len()
                && rng.below(if pr.hostile { hostile_odds } else { 2 }) == 0
            {
                pr.at += 1;
                (
                    "pull_request",
                    id,
                    pr_event(&path, &base, pr, "synchronize", &pr.heads[pr.at]),
                )
            } else {
                comment_id += 1;
                (
                    "issue_comment",
                    id,
                    rebench(&github, &path, pr.number, comment_id),
                )
            }
        };
        let up: Vec<usize> = (0..2).filter(|i| servers.running[*i].is_some()).collect();
        let target = up.get(rng.below(up.len().max(1) as u64) as usize).copied();
        let (event, id, body) = delivery;
        let sent = match target {
            Some(i) => {
                let bytes = serde_json::to_vec(&body).unwrap();
                let signature = sign_with(SECRET.as_bytes(), &bytes);
                let server = servers.running[i].as_ref().unwrap();
                tokio::time::timeout(
                    Duration::from_secs(10),
                    post(server, event, &id, Some(&signature), bytes),
                )
                .await
                .ok()
                .map(|(status, _)| status)
            }
            None => None,
        };
        match sent {
            Some(status) if (200..300).contains(&status) => {
                acked.insert(id);
            }
            // Not taken (a 503 while the database stalls, a server down): GitHub redelivers.
            _ => unsent.push((event, id, body)),
        }
        tokio::time::sleep(rng.secs(0, 2)).await;

        if Instant::now() >= next_fault {
            next_fault = Instant::now() + rng.secs(gap_from, gap_to);
            let kinds: &[&str] = if restart_postgres {
                &[
                    "kill server",
                    "kill agent",
                    "stall database",
                    "github errors",
                    "rate limit",
                    "full disk",
                    "restart postgres",
                ]
            } else {
                &[
                    "kill server",
                    "kill agent",
                    "stall database",
                    "github errors",
                    "rate limit",
                    "full disk",
                ]
            };
            let kind = kinds[rng.below(kinds.len() as u64) as usize];
            let kind = if kind == "full disk" && !disk {
                "kill agent"
            } else {
                kind
            };
            *faults.entry(kind).or_default() += 1;
            eprintln!(
                "soak [{:>5.0}s] fault: {kind}",
                started.elapsed().as_secs_f64()
            );
            match kind {
                "kill server" => {
                    let i = rng.below(2) as usize;
                    if let Some(mut s) = servers.running[i].take() {
                        let _ = s.child.kill();
                        let _ = s.child.wait();
                    }
                    tokio::time::sleep(rng.secs(2, 5)).await;
                    servers.start(i);
                }
                "kill agent" => {
                    let i = rng.below(3) as usize;
                    agents.kill(i);
                    tokio::time::sleep(rng.secs(2, 5)).await;
                    agents.start(i);
                }
                "stall database" => {
                    proxy.hang.store(true, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(rng.secs(5, 15)).await;
                    proxy.hang.store(false, std::sync::atomic::Ordering::SeqCst);
                }
                "github errors" => {
                    let calls = [Calls::Comments, Calls::CheckRuns][rng.below(2) as usize];
                    github.inject(calls, &[Fault::Status(502, None); 6]);
                }
                "rate limit" => {
                    github.inject(Calls::Comments, &[Fault::SecondaryRateLimit(3); 2]);
                }
                "full disk" => {
                    let fill = small_disk.join("fill");
                    let _ = std::process::Command::new("fallocate")
                        .args(["-l", "255M"])
                        .arg(&fill)
                        .status();
                    tokio::time::sleep(rng.secs(5, 15)).await;
                    let _ = std::fs::remove_file(&fill);
                }
                "restart postgres" => {
                    let version = std::fs::read_dir("/etc/postgresql")
                        .unwrap()
                        .flatten()
                        .next()
                        .unwrap()
                        .file_name();
                    let restarted = std::process::Command::new("pg_ctlcluster")
                        .arg("--skip-systemctl-redirect")
                        .arg(&version)
                        .args(["main", "restart"])
                        .status()
                        .unwrap();
                    assert!(restarted.success(), "pg_ctlcluster restart failed");
                }
                _ => unreachable!(),
            }
        }
    }

    // Quiet: everything up, every delivery taken, every comparison ended, the outbox empty.
    let soaked = started.elapsed();
    for i in 0..2 {
        if servers.running[i].is_none() {
            servers.start(i);
        }
    }
    for (event, id, body) in std::mem::take(&mut unsent) {
        let bytes = serde_json::to_vec(&body).unwrap();
        let signature = sign_with(SECRET.as_bytes(), &bytes);
        let (status, _) = post(
            servers.running[0].as_ref().unwrap(),
            event,
            &id,
            Some(&signature),
            bytes,
        )
        .await;
        assert!((200..300).contains(&status), "redelivery of {id}: {status}");
        acked.insert(id);
    }
    let db = &pg.url;
    wait_until(
        "every comparison to end and the outbox to drain",
        Duration::from_secs(900),
        async || {
            let active = count_rows(
                db,
                "SELECT COUNT(*) FROM comparisons WHERE state IN ('queued', 'running')",
            )
            .await;
            let pending = count_rows(db, "SELECT COUNT(*) FROM outbox WHERE done_at IS NULL").await;
            if active == 0 && pending == 0 {
                Ok(())
            } else {
                Err(format!(
                    "{active} comparisons active, {pending} outbox rows pending"
                ))
            }
        },
    )
    .await;

    // 1. Every delivery GitHub saw accepted is recorded (once: the id is the key).
    let mut lost_deliveries = Vec::new();
    for id in &acked {
        let n = count_rows(
            db,
            &format!("SELECT COUNT(*) FROM webhook_deliveries WHERE delivery_id = '{id}'"),
        )
        .await;
        if n != 1 {
            lost_deliveries.push(id.clone());
        }
    }
    // 2. Every round an agent said it uploaded is stored; nothing is stored twice.
    let logs = agents.all_logs();
    let uploaded: BTreeSet<(i64, i64)> = logs
        .lines()
        .filter(|l| l.contains("round uploaded"))
        .filter_map(|l| {
            let field = |k: &str| -> Option<i64> {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(k))
                    .and_then(|v| v.parse().ok())
            };
            Some((field("job=")?, field("round=")?))
        })
        .collect();
    let mut lost_rounds = Vec::new();
    for (job, round) in &uploaded {
        let n = count_rows(
            db,
            &format!("SELECT COUNT(*) FROM samples WHERE job_id = {job} AND round = {round}"),
        )
        .await;
        if n == 0 {
            lost_rounds.push((*job, *round));
        }
    }
    let doubled = count_rows(db, "SELECT COUNT(*) FROM (SELECT job_id, attempt, round, side, benchmark, metric \
         FROM samples GROUP BY job_id, attempt, round, side, benchmark, metric HAVING COUNT(*) > 1) d").await;
    let samples = count_rows(db, "SELECT COUNT(*) FROM samples").await;
    let comparisons = count_rows(db, "SELECT COUNT(*) FROM comparisons").await;
    // 3. Each opened PR's newest head ended with the verdict its modelled change gives.
    let mut wrong = Vec::new();
    for pr in prs.iter().filter(|p| p.opened) {
        let head = &pr.heads[pr.at];
        let newest = github
            .checks()
            .into_iter()
            .filter(|c| c.head_sha == *head)
            .max_by_key(|c| c.id);
        let conclusion = newest.as_ref().and_then(|c| c.conclusion.clone());
        // What its jobs went through, so a wrong verdict can be explained from the log.
        let jobs = text_row(
            db,
            &format!(
                "SELECT COALESCE(string_agg(n || ' ' || state || ' after ' || attempts || \
                 '/' || max_attempts || ' attempt(s), last error: ' || err, ' | '), 'no jobs') \
                 FROM (SELECT COUNT(*) AS n, j.state, j.attempts, j.max_attempts, \
                 COALESCE(MAX(j.last_error), '-') AS err FROM jobs j \
                 JOIN comparisons c ON c.id = j.comparison_id \
                 WHERE c.pr_number = {} AND c.head_sha = '{head}' \
                 GROUP BY j.state, j.attempts, j.max_attempts) g",
                pr.number
            ),
        )
        .await;
        let right = if pr.hostile {
            // Stopped, with the limit named, and reported as a failed benchmark.
            let said = attacks[pr.at % attacks.len()].2;
            newest
                .as_ref()
                .is_some_and(|c| c.status == "completed" && c.title == "the benchmark jobs failed")
                && jobs.contains(said)
        } else {
            let want_failure = pr.factor > 1.0;
            // Every finished comparison has rows: "no results yet" is a lost result whatever
            // the factor (a neutral check passes the unchanged and faster PRs' test otherwise).
            (conclusion.as_deref() == Some("failure")) == want_failure
                && newest
                    .as_ref()
                    .is_some_and(|c| c.status == "completed" && !c.title.contains("no results yet"))
        };
        if !right {
            wrong.push(format!(
                "#{}{} ×{}: {:?}; jobs: {jobs}",
                pr.number,
                if pr.hostile { " (hostile)" } else { "" },
                pr.factor,
                newest.map(|c| (c.status, c.conclusion, c.title))
            ));
        }
    }
    // The hostile PR's attacks: how often each was stopped, and nothing of them still running.
    let mut stopped = Vec::new();
    for (name, _, said) in &attacks {
        let n = count_rows(
            db,
            &format!(
                "SELECT COUNT(*) FROM jobs j JOIN comparisons c ON c.id = j.comparison_id \
                 WHERE c.pr_number = {} AND j.last_error LIKE '%{}%'",
                prs[HOSTILE].number, said
            ),
        )
        .await;
        stopped.push(format!("{name} {n}"));
    }
    let survivors = std::process::Command::new("pgrep")
        .args(["-f", &format!("sleep 30[01]\\.{marker}")])
        .output()
        .unwrap()
        .stdout;
    // 4. One comment per PR.
    let comments = github.bot_report_comments(LABEL);
    let mut per_pr: BTreeMap<u64, usize> = BTreeMap::new();
    for c in &comments {
        *per_pr.entry(c.pr).or_default() += 1;
    }
    let extra_comments: Vec<_> = per_pr.iter().filter(|(_, n)| **n > 1).collect();
    // 5. Memory now, for the processes running at the end.
    let rss_end: Vec<(String, Option<f64>)> = servers
        .running
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                format!("server {i}"),
                s.as_ref().and_then(|s| rss_mib(s.child.id())),
            )
        })
        .chain(agents.running.iter().enumerate().map(|(i, a)| {
            (
                format!("agent {i}"),
                a.as_ref().and_then(|a| rss_mib(a.child.id())),
            )
        }))
        .collect();

    eprintln!(
        "soak: {:.0} s with faults (seed {seed}), {} faults {faults:?}; {} deliveries accepted, \
         {} rounds uploaded, {samples} samples, {comparisons} comparisons, {} comments on {} PRs; \
         lost deliveries {}, lost rounds {}, doubled samples {doubled}, wrong verdicts {}; \
         hostile jobs stopped: {}, processes of them left {}; \
         memory MiB at start {rss_start:?}, at the end {rss_end:?}",
        soaked.as_secs_f64(),
        faults.values().sum::<usize>(),
        acked.len(),
        uploaded.len(),
        comments.len(),
        per_pr.len(),
        lost_deliveries.len(),
        lost_rounds.len(),
        wrong.len(),
        stopped.join(", "),
        String::from_utf8_lossy(&survivors).lines().count(),
    );
    if disk {
        let _ = std::process::Command::new("umount")
            .arg(&small_disk)
            .status();
    }
    assert!(
        lost_deliveries.is_empty(),
        "deliveries lost: {lost_deliveries:?}"
    );
    assert!(lost_rounds.is_empty(), "rounds lost: {lost_rounds:?}");
    assert_eq!(doubled, 0, "samples stored twice");
    assert!(wrong.is_empty(), "verdicts: {wrong:#?}");
    assert!(
        survivors.is_empty(),
        "the hostile PR's processes outlived their runs: {}",
        String::from_utf8_lossy(&survivors)
    );
    assert!(
        !hooked_mark(&marker).exists(),
        "the hostile PR's git hook ran outside the sandbox"
    );
    assert!(
        extra_comments.is_empty(),
        "more than one comment: {extra_comments:?}"
    );
    nothing_refused(&github);
}
