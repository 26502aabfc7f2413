//! `benchgate serve` and `benchgate migrate` as a user runs them: the real binary, a real port,
//! a real SQLite file or a fresh Postgres database.

use std::process::Command;

use crate::support::{BIN, FreshPostgres, http, postgres_admin_url, spawn_server};

async fn get(url: &str) -> (u16, serde_json::Value) {
    let resp = http().get(url).send().await.expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

#[tokio::test]
async fn serves_health_and_readiness_on_a_new_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    let server = spawn_server(&format!("sqlite://{}", db.display()), &[]);

    let (status, body) = get(&server.url("/healthz")).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = get(&server.url("/readyz")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["database"], "sqlite");
    assert_eq!(body["migrations_current"], true);
    assert!(db.exists(), "the SQLite file is created");

    let status = server.terminate();
    assert!(status.success(), "SIGTERM exits 0, got {status:?}");
}

#[tokio::test]
async fn serves_health_and_readiness_on_postgres() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let pg = FreshPostgres::create(&admin);
    let server = spawn_server(&pg.url, &[]);
    let (status, _) = get(&server.url("/healthz")).await;
    assert_eq!(status, 200);
    let (status, body) = get(&server.url("/readyz")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["database"], "postgres");
    assert!(server.terminate().success());
}

#[test]
fn unreachable_database_is_one_clear_line_with_the_password_masked() {
    let out = Command::new(BIN)
        .args([
            "serve",
            "--database-url",
            "postgres://bench:hunter2@127.0.0.1:1/nowhere",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("postgres://bench:***@127.0.0.1:1/nowhere"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn malformed_database_url_is_a_clear_error() {
    let out = Command::new(BIN)
        .args(["migrate", "--database-url", "mysql://root:pw@localhost/db"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("mysql://root:***@localhost/db"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_listen_address_in_use_is_named_in_the_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--listen", &addr])
        .env(
            "BENCHGATE_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("b.db").display()),
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on {addr}")),
        "{stderr}"
    );
}

#[test]
fn a_malformed_webhook_secret_list_refuses_to_start_and_names_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("BENCHGATE_WEBHOOK_SECRET", "s3cret-one,,s3cret-two")
        .env(
            "BENCHGATE_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("b.db").display()),
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("webhook secret list is malformed"),
        "{stderr}"
    );
    assert!(stderr.contains("secret number 2 is empty"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert!(!dir.path().join("b.db").exists(), "nothing was created");
}

/// A secret given as a flag's value is readable by every local user in /proc/PID/cmdline: the
/// server refuses to start, names the variable and the file flag to use, and never the value.
#[test]
fn a_secret_on_the_command_line_refuses_to_start_and_says_what_to_use() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--webhook-secret", "s3cret-on-argv"])
        .env(
            "BENCHGATE_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("b.db").display()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A server that accepted the flag would run until stopped: give it a minute to exit.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            let _ = server.wait();
            panic!("the server started with a secret on its command line");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(!status.success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("--webhook-secret on the command line is refused"),
        "{stderr}"
    );
    assert!(stderr.contains("BENCHGATE_WEBHOOK_SECRET"), "{stderr}");
    assert!(stderr.contains("--webhook-secret-file PATH"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert!(!dir.path().join("b.db").exists(), "nothing was created");
}

/// The same secret from a file (`--webhook-secret-file`) verifies deliveries.
#[tokio::test]
async fn a_webhook_secret_from_a_file_verifies_deliveries() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("webhook-secret");
    std::fs::write(&file, "file-secret\n").unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let server = spawn_server(
        &url,
        &[("BENCHGATE_WEBHOOK_SECRET_FILE", file.to_str().unwrap())],
    );
    let body = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#.to_vec();
    let signature = benchgate_github::signature::sign_with(b"file-secret", &body);
    let answer = http()
        .post(server.url("/webhooks/github"))
        .header("X-GitHub-Event", "ping")
        .header("X-GitHub-Delivery", "from-file")
        .header("X-Hub-Signature-256", signature)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);
}

#[test]
fn unknown_flags_get_the_usage_message() {
    let out = Command::new(BIN)
        .args(["serve", "--frobnicate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Usage: benchgate serve"), "{stderr}");
}

#[test]
fn migrate_creates_the_schema_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("m.db").display());
    for _ in 0..2 {
        let out = Command::new(BIN)
            .args(["migrate", "--database-url", &url])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("migrations applied"));
    }
}

/// Errors the framework writes (a body over the limit, JSON the handler cannot read) are JSON
/// like every other error; pages carry nosniff and a content security policy; behind https
/// the dashboard cookie is Secure.
#[tokio::test]
async fn errors_are_json_and_pages_carry_safe_headers() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let server = spawn_server(
        &url,
        &[
            ("BENCHGATE_BODY_LIMIT", "1000"),
            ("BENCHGATE_ADMIN_TOKEN", "admin"),
            ("BENCHGATE_DASHBOARD_TOKEN", "dash"),
            ("BENCHGATE_PUBLIC_URL", "https://bench.example"),
        ],
    );
    let client = http();
    for (body, status) in [(vec![b'x'; 5000], 413), (b"{not json".to_vec(), 400)] {
        let resp = client
            .post(server.url("/api/v1/comparisons"))
            .bearer_auth("admin")
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), status);
        assert_eq!(resp.headers()["content-type"], "application/json");
        let json: serde_json::Value = resp.json().await.unwrap();
        assert!(
            json["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{json}"
        );
    }
    let resp = client.get(server.url("/?token=dash")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let h = resp.headers();
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert!(
        h["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    let cookie = h["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.ends_with("; Secure"),
        "{cookie}"
    );
}

/// An env file or compose file writes `BENCHGATE_GITHUB_APP_ID=` for "no App": empty settings
/// count as unset, so the server starts without GitHub credentials.
#[tokio::test]
async fn empty_settings_in_the_environment_count_as_unset() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let server = spawn_server(
        &url,
        &[
            ("BENCHGATE_GITHUB_APP_ID", ""),
            ("BENCHGATE_GITHUB_PRIVATE_KEY_FILE", ""),
            ("BENCHGATE_ADMIN_TOKEN", ""),
        ],
    );
    let (status, body) = get(&server.url("/readyz")).await;
    assert_eq!(status, 200, "{body}");
    assert!(server.terminate().success());
}
