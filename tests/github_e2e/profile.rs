//! Differential profiles end to end: a C program built with symbols in the test's repository,
//! whose head adds work in `slow_path`; the real server and agent (sandbox on), the strict fake.
//! The slower verdict asks for a profile; the comment then names `slow_path` first.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{
    LABEL, Project, Setup, done_of, eventually, nothing_refused, report_done, setup_project,
};
use crate::github::{self, FakeGitHub};
use crate::support::{git, http, wait_until};

/// `bench.c` as the base commit has it; head's commit calls `slow_path` too.
const BENCH_C: &str = include_str!("../fixtures/profile/bench.c");

/// A repository whose head commit about quadruples the work, all of it added in `slow_path`: a
/// slowdown that wall time decides in 8 rounds even on a loaded machine (+50% once did not).
fn c_project(dir: &Path) -> Project {
    let path = dir.join("project");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("bench.c"), BENCH_C).unwrap();
    git(&path, &["init", "-q"]);
    git(&path, &["add", "."]);
    git(&path, &["commit", "-qm", "base"]);
    let base = git(&path, &["rev-parse", "HEAD"]);
    let head_c = BENCH_C.replace("/* HEAD: slow_path(120000000); */", "slow_path(120000000);");
    assert_ne!(head_c, BENCH_C);
    std::fs::write(path.join("bench.c"), head_c).unwrap();
    git(&path, &["commit", "-qam", "head: more work in slow_path"]);
    let head = git(&path, &["rev-parse", "HEAD"]);
    Project { path, base, head }
}

fn c_config() -> String {
    format!(
        "[benchmark]\nbuild = \"gcc -O1 -g -fno-omit-frame-pointer -o bench bench.c\"\n\
         run = \"./bench\"\nformat = \"command\"\nrounds = 8\nwarmup = 1\nrunner = \"{LABEL}\"\n\n\
         [gate]\nrare_slow_runs = \"off\"\nfail_on = \"regression\"\n"
    )
}

/// The server with automatic profiles on (3 runs per side), the C project, an agent whose
/// sandbox is required, and the PR opened.
async fn profiled(agent_env: &[(&str, &OsStr)]) -> Setup {
    let config = c_config();
    let github = FakeGitHub::start(Some(&config)).await;
    let key = github::app_key_file();
    let app_id = github::APP_ID.to_string();
    let env = [
        ("BENCHGATE_GITHUB_APP_ID", app_id.as_str()),
        ("BENCHGATE_GITHUB_PRIVATE_KEY_FILE", key.to_str().unwrap()),
        ("BENCHGATE_PROFILE_RUNS", "3"),
    ];
    let mut s = setup_project(github, &env, None, c_project).await;
    let (status, body) = s
        .deliver("pull_request", "d-open-1", &s.pull_request_opened())
        .await;
    assert_eq!(status, 202, "{body}");
    let mut env = vec![("BENCHGATE_SANDBOX", OsStr::new("bwrap"))];
    env.extend_from_slice(agent_env);
    s.start_agent_with(LABEL, &env).await;
    eventually(&s.github, "the final comment", 240, || {
        report_done(&s.github, 8)
    })
    .await;
    s
}

/// The report comment once it has a profile section matching `done`.
async fn comment_with(s: &Setup, what: &str, done: impl Fn(&str) -> bool) -> String {
    eventually(&s.github, what, 180, || {
        s.github
            .bot_report_comments(LABEL)
            .first()
            .is_some_and(|c| done(&c.body))
    })
    .await;
    s.github.bot_report_comments(LABEL)[0].body.clone()
}

/// The comparison table's lines: what the verdict rests on.
fn table(body: &str) -> Vec<&str> {
    body.lines()
        .take_while(|l| !l.starts_with("**Where the time went**") && !l.starts_with("**Profile:**"))
        .filter(|l| l.starts_with('|'))
        .collect()
}

fn comparison_id(body: &str) -> i64 {
    let at = body.find("https://bench.example/comparisons/").unwrap();
    body[at + "https://bench.example/comparisons/".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_slower_head_is_profiled_after_its_verdict_and_the_comment_names_the_function() {
    let s = profiled(&[]).await;
    let verdict = s.github.bot_report_comments(LABEL)[0].body.clone();
    assert!(verdict.contains("**slower ("), "{verdict}");
    // The comparison's own samples (an A/A calibration of the new runner adds its own).
    let compared = "SELECT COUNT(*) FROM samples s JOIN jobs j ON j.id = s.job_id \
                    WHERE j.kind = 'comparison'";
    let samples_at_verdict = s.count(compared).await;
    assert!(samples_at_verdict > 0);

    let body = comment_with(&s, "the profile in the comment", |b| {
        b.contains("**Where the time went**")
    })
    .await;
    eprintln!("profiled comment:\n{body}");
    // The first function row: slow_path, with a positive change of its own share.
    let header = body
        .lines()
        .position(|l| l == "| self | total | function |")
        .unwrap();
    let first = body.lines().nth(header + 2).unwrap();
    assert!(
        first.starts_with("| +") && first.contains("`slow_path`"),
        "{first}"
    );
    assert!(body.contains("perf `"), "the event used is named: {body}");

    // Profiled runs are never samples: the counts and the verdict's table are unchanged.
    let samples_now = s.count(compared).await;
    assert_eq!(
        samples_now, samples_at_verdict,
        "samples changed after the verdict"
    );
    let profile_samples = "SELECT COUNT(*) FROM samples s JOIN jobs j ON j.id = s.job_id \
                           WHERE j.profile IS NOT NULL";
    assert_eq!(s.count(profile_samples).await, 0);
    assert_eq!(table(&body), table(&verdict));
    assert!(done_of(&body, 8), "{body}");
    // They ran after every measuring job had finished.
    let before_verdict = "SELECT COUNT(*) FROM jobs p JOIN jobs m ON m.comparison_id = p.comparison_id \
                          WHERE p.profile IS NOT NULL AND m.profile IS NULL \
                          AND p.started_at < m.finished_at";
    assert_eq!(s.count(before_verdict).await, 0);
    assert_eq!(s.count("SELECT COUNT(*) FROM profiles").await, 1);

    // The check says the same, on the same run (a completed check is restated, never reopened).
    let checks = s.github.checks();
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0].conclusion.as_deref(), Some("failure"));
    wait_until(
        "the check's summary to show the profile",
        Duration::from_secs(60),
        async || {
            let checks = s.github.checks();
            if checks[0].summary.contains("`slow_path`") {
                Ok(())
            } else {
                Err(checks[0].summary.clone())
            }
        },
    )
    .await;

    // The differential flame graph and the JSON.
    let id = comparison_id(&body);
    let svg = http()
        .get(s.server.url(&format!("/comparisons/{id}/profile.svg")))
        .send()
        .await
        .unwrap();
    assert_eq!(svg.status(), 200);
    assert_eq!(svg.headers()["content-type"], "image/svg+xml");
    assert!(
        svg.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    let svg = svg.text().await.unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("slow_path"),
        "{}",
        &svg[..svg.len().min(500)]
    );
    let json: Value = http()
        .get(s.server.url(&format!("/api/v1/comparisons/{id}/profile")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(json["functions"][0]["function"], "slow_path", "{json:#}");
    assert!(
        json["functions"][0]["self_pp"].as_f64().unwrap() > 0.0,
        "{json:#}"
    );
    assert_eq!(json["runs"], 3);
    nothing_refused(&s.github);
}

/// A directory of links to everything on PATH but `perf`: the runner as if linux-perf were
/// not installed.
fn path_without_perf(dir: &Path) -> PathBuf {
    let farm = dir.join("bin-without-perf");
    std::fs::create_dir_all(&farm).unwrap();
    for entry in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        let Ok(files) = std::fs::read_dir(&entry) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name();
            if name == "perf" || name.to_string_lossy().starts_with("perf_") {
                continue;
            }
            let _ = std::os::unix::fs::symlink(file.path(), farm.join(&name));
        }
    }
    farm
}

#[tokio::test]
async fn without_perf_the_comment_says_so_in_one_line_and_the_verdict_stands() {
    // Not under /tmp (nor a target dir there, as in a CI clone): the sandbox gives PR code a
    // private /tmp, and PATH must resolve inside it.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let path = path_without_perf(dir.path());
    let s = profiled(&[("PATH", path.as_os_str())]).await;
    let body = comment_with(&s, "the profile's note", |b| {
        b.contains("**Profile:** not taken")
    })
    .await;
    let line = body
        .lines()
        .find(|l| l.starts_with("**Profile:**"))
        .unwrap();
    assert!(
        line.contains("`gh-e2e-1`") && line.contains("perf is not on PATH"),
        "{line}"
    );
    assert!(body.contains("**slower ("), "{body}");
    let checks = s.github.checks();
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].conclusion.as_deref(), Some("failure"));
    let svg = http()
        .get(s.server.url(&format!(
            "/comparisons/{}/profile.svg",
            comparison_id(&body)
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(svg.status(), 404);
    nothing_refused(&s.github);
}
