//! `benchgate gitlab check` through the real binary, against the strict fake GitLab of
//! crates/gitlab: the token from a file or the environment (never a flag), one line per
//! finding, and exit codes a script can act on.

use std::process::Command;

use crate::gitlab_fake::{BOT, FakeGitlab, TOKEN};

const BIN: &str = env!("CARGO_BIN_EXE_benchgate");

fn check(
    url: &str,
    token_file: Option<&std::path::Path>,
    env_token: Option<&str>,
) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.args(["gitlab", "check", "--url", url, "--project", "perf/parser"])
        .env_remove("BENCHGATE_GITLAB_TOKEN")
        .env_remove("BENCHGATE_GITLAB_TOKEN_FILE")
        .env_remove("BENCHGATE_GITLAB_URL");
    if let Some(file) = token_file {
        cmd.arg("--token-file").arg(file);
    }
    if let Some(token) = env_token {
        cmd.env("BENCHGATE_GITLAB_TOKEN", token);
    }
    cmd.output().unwrap()
}

#[tokio::test]
async fn gitlab_check_reads_the_token_from_a_file_or_the_environment_and_says_what_to_fix() {
    let fake = FakeGitlab::start().await;
    fake.state().projects.insert(42, "perf/parser".to_owned());
    fake.member(42, BOT, 30);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let url = fake.url();
    let out = tokio::task::spawn_blocking(move || check(&url, Some(&file), None))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok   role: Developer (30)"), "{stdout}");

    fake.state().scopes = vec!["read_api".to_owned()];
    let url = fake.url();
    let out = tokio::task::spawn_blocking(move || check(&url, None, Some(TOKEN)))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("fix  scopes: read_api: benchgate needs `api`"),
        "{stdout}"
    );

    let url = fake.url();
    let out = tokio::task::spawn_blocking(move || check(&url, None, Some("glpat-wrong")))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("401 Unauthorized"));

    let url = fake.url();
    let out = tokio::task::spawn_blocking(move || check(&url, None, None))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no token: set BENCHGATE_GITLAB_TOKEN or --token-file FILE")
    );
    // The token itself is never a flag.
    let out = Command::new(BIN)
        .args(["gitlab", "check", "--project", "x", "--token", TOKEN])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
