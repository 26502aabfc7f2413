//! The GitHub App setup (manifest flow) end to end: the real `benchgate serve` on a real SQLite
//! file or Postgres database, a fake GitHub (wiremock) answering the code exchange with GitHub's
//! documented example, and the browser's requests made by the test.

use std::time::Duration;

use crate::github::{fixture, fixture_path};
use crate::support::{FreshPostgres, Server, http, postgres_admin_url, spawn_server, wait_until};
use benchgate_github::signature::sign_with;
use serde_json::Value;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ADMIN: &str = "setup-admin-token";
/// A code as GitHub's redirect carries it.
const CODE: &str = "a180b1a3d263c81bc6441d7b990bae27d4c10679";
/// The fake GitHub's web pages (the form's target); never contacted by the server.
const WEB: &str = "https://github.example";

/// What GitHub's example conversion answers; the test checks none of it reaches a log.
struct Created {
    webhook_secret: String,
    pem_line: String,
    client_secret: String,
}

fn created() -> Created {
    let answer = fixture("rest/create-app-from-manifest.201.json");
    Created {
        webhook_secret: answer["webhook_secret"].as_str().unwrap().into(),
        pem_line: answer["pem"]
            .as_str()
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .into(),
        client_secret: answer["client_secret"].as_str().unwrap().into(),
    }
}

/// A fake GitHub that answers the code exchange once and records the App's later calls.
async fn fake_github() -> MockServer {
    let github = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/app-manifests/{CODE}/conversions")))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(fixture("rest/create-app-from-manifest.201.json")),
        )
        .expect(1)
        .mount(&github)
        .await;
    github
}

fn start(database_url: &str, github: &MockServer, extra: &[(&str, &str)]) -> Server {
    let api = github.uri();
    let mut env = vec![
        ("BENCHGATE_ADMIN_TOKEN", ADMIN),
        ("BENCHGATE_GITHUB_API_URL", api.as_str()),
        ("BENCHGATE_GITHUB_WEB_URL", WEB),
        ("BENCHGATE_PUBLIC_URL", "https://bench.example"),
        ("BENCHGATE_OUTBOX_BACKOFF_MS", "100"),
        // Debug on benchgate's own crates: the secrets must stay out of every line it writes.
        (
            "RUST_LOG",
            "info,benchgate=debug,benchgate_server=debug,benchgate_github=debug",
        ),
    ];
    env.extend_from_slice(extra);
    spawn_server(database_url, &env)
}

async fn get(server: &Server, path: &str, bearer: Option<&str>) -> (u16, String) {
    let mut req = http().get(server.url(path));
    if let Some(token) = bearer {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// Posts a `pull_request.opened` delivery signed with `secret`.
async fn deliver(server: &Server, secret: &str, delivery: &str) -> u16 {
    let body = std::fs::read(fixture_path("webhooks/pull_request.opened.json")).unwrap();
    http()
        .post(server.url("/webhooks/github"))
        .header("X-GitHub-Event", "pull_request")
        .header("X-GitHub-Delivery", delivery)
        .header("Content-Type", "application/json")
        .header("X-Hub-Signature-256", sign_with(secret.as_bytes(), &body))
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The `state` in the setup page's form that posts to GitHub.
fn state_in(page: &str, new_app_path: &str) -> String {
    let prefix = format!("action=\"{WEB}{new_app_path}?state=");
    let start = page
        .find(&prefix)
        .unwrap_or_else(|| panic!("no form posting to {new_app_path} in:\n{page}"))
        + prefix.len();
    page[start..].split('"').next().unwrap().to_owned()
}

/// Opens the setup page as the admin and comes back from GitHub with its state and [`CODE`].
async fn complete_setup(server: &Server) -> (u16, String) {
    let (_, page) = get(server, "/github/setup", Some(ADMIN)).await;
    let state = state_in(&page, "/settings/apps/new");
    get(
        server,
        &format!("/github/setup/callback?code={CODE}&state={state}"),
        None,
    )
    .await
}

/// The manifest the setup form posts, as the browser sends it (HTML entities decoded).
fn manifest_in(page: &str) -> Value {
    let prefix = "name=\"manifest\" value=\"";
    let start = page.find(prefix).expect("a manifest field") + prefix.len();
    let raw = page[start..].split('"').next().unwrap();
    let decoded = raw
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&decoded).unwrap_or_else(|e| panic!("{e}: {decoded}"))
}

/// Calls for installation tokens the App made (each signed with a JWT from the stored key).
async fn token_requests(github: &MockServer) -> usize {
    github
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| {
            r.method.as_str() == "POST" && r.url.path() == "/app/installations/1/access_tokens"
        })
        .filter(|r| {
            r.headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("Bearer ") && v.matches('.').count() == 2)
        })
        .count()
}

/// Waits until the App asked for more installation tokens than `before`.
async fn app_calls_github(github: &MockServer, before: usize) -> usize {
    let what = "the outbox worker to call GitHub as the stored App";
    wait_until(what, Duration::from_secs(60), async || {
        let now = token_requests(github).await;
        if now > before {
            Ok(now)
        } else {
            Err(format!("requests: {:?}", github.received_requests().await))
        }
    })
    .await
}

/// Stops the server and returns every line it logged after it started listening.
fn stop(mut server: Server) -> Vec<String> {
    let logs = std::mem::replace(&mut server.logs, std::sync::mpsc::channel().1);
    assert!(server.terminate().success(), "SIGTERM exits 0");
    // The reader thread ends at the closed pipe, so this drains to the last line.
    logs.into_iter().collect()
}

fn assert_no_secret_in(lines: &[String], created: &Created) {
    for line in lines {
        for secret in [
            created.webhook_secret.as_str(),
            created.pem_line.as_str(),
            created.client_secret.as_str(),
            CODE,
            ADMIN,
        ] {
            assert!(!line.contains(secret), "a secret reached the log: {line}");
        }
    }
}

/// Moves every unused setup state's expiry into the past.
async fn expire_states(database_url: &str) {
    use sqlx::Connection;
    let past = chrono::Utc::now() - chrono::TimeDelta::hours(2);
    let sql = "UPDATE github_setup_states SET expires_at = $1 WHERE used_at IS NULL";
    if database_url.starts_with("postgres") {
        let mut c = sqlx::PgConnection::connect(database_url).await.unwrap();
        sqlx::query(sql).bind(past).execute(&mut c).await.unwrap();
    } else {
        let mut c = sqlx::SqliteConnection::connect(database_url).await.unwrap();
        sqlx::query(sql).bind(past).execute(&mut c).await.unwrap();
    }
}

/// The whole flow on one database: refused without the admin token, page, callback, the next
/// webhook verified with the stored secret by the same server, the outbox writing as the App,
/// and both again after a restart.
async fn setup_flow(database_url: &str) {
    let created = created();
    let github = fake_github().await;
    let server = start(database_url, &github, &[]);

    for (path, bearer) in [
        ("/github/setup", None),
        ("/github/setup?token=wrong", None),
        ("/github/setup", Some("wrong")),
    ] {
        let (status, page) = get(&server, path, bearer).await;
        assert_eq!(status, 401, "{path} {bearer:?}: {page}");
        assert!(page.contains("admin"), "{page}");
    }
    assert_eq!(
        deliver(&server, &created.webhook_secret, "before-setup").await,
        401,
        "no App stored yet: no secret verifies"
    );

    let resp = http()
        .get(server.url(&format!("/github/setup?token={ADMIN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let policy = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        policy.contains(&format!("form-action 'self' {WEB}")),
        "{policy}"
    );
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let page = resp.text().await.unwrap();
    let state = state_in(&page, "/settings/apps/new");
    assert_eq!(state.len(), 64, "{state}");
    let manifest = manifest_in(&page);
    assert_eq!(manifest["url"], "https://bench.example");
    assert_eq!(
        manifest["hook_attributes"]["url"],
        "https://bench.example/webhooks/github"
    );
    assert_eq!(
        manifest["redirect_url"],
        "https://bench.example/github/setup/callback"
    );
    assert_eq!(
        manifest["default_events"],
        serde_json::json!([
            "pull_request",
            "issue_comment",
            "check_run",
            "check_suite",
            "push",
            "merge_group"
        ]),
        "installation is sent to every App and refused as a default event"
    );
    assert_eq!(
        manifest["default_permissions"]["merge_queues"], "read",
        "GitHub sends merge_group only with the Merge queues permission"
    );

    let (status, org_page) = get(&server, "/github/setup?org=acme", Some(ADMIN)).await;
    assert_eq!(status, 200, "{org_page}");
    let org_state = state_in(&org_page, "/organizations/acme/settings/apps/new");
    assert_ne!(org_state, state, "every page gets its own state");
    let (status, _) = get(&server, "/github/setup?org=../x", Some(ADMIN)).await;
    assert_eq!(status, 400);

    let refused = [
        (
            format!(
                "/github/setup/callback?code={CODE}&state={}",
                "0".repeat(64)
            ),
            "unknown",
        ),
        (
            "/github/setup/callback?state=x".to_owned(),
            "lacks its code or state",
        ),
        (
            format!("/github/setup/callback?code=../x&state={state}"),
            "malformed",
        ),
    ];
    for (path, reason) in &refused {
        let (status, page) = get(&server, path, None).await;
        assert_eq!(status, 400, "{path}: {page}");
        assert!(page.contains(reason), "{path}: {page}");
    }

    let (status, page) = get(
        &server,
        &format!("/github/setup/callback?code={CODE}&state={state}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("href=\"https://github.com/apps/octoapp/installations/new\""),
        "{page}"
    );
    let (status, page) = get(
        &server,
        &format!("/github/setup/callback?code={CODE}&state={state}"),
        None,
    )
    .await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("already used"), "{page}");

    expire_states(database_url).await;
    let (status, page) = get(
        &server,
        &format!("/github/setup/callback?code={CODE}&state={org_state}"),
        None,
    )
    .await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("expired"), "{page}");

    assert_eq!(
        deliver(&server, "not-the-secret", "wrong-secret").await,
        401
    );
    assert_eq!(
        deliver(&server, &created.webhook_secret, "after-setup").await,
        202,
        "the same running server verifies with the stored secret"
    );
    let calls = app_calls_github(&github, 0).await;
    let mut lines = stop(server);
    assert!(
        lines.iter().any(|l| l.contains("GitHub App created")),
        "the log says what happened: {lines:#?}"
    );

    let server = start(database_url, &github, &[]);
    assert_eq!(
        deliver(&server, &created.webhook_secret, "after-restart").await,
        202,
        "a restarted server verifies with the stored secret"
    );
    app_calls_github(&github, calls).await;
    lines.extend(stop(server));
    assert_no_secret_in(&lines, &created);
}

#[tokio::test]
async fn setup_stores_the_app_and_the_next_webhook_verifies_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    setup_flow(&url).await;
}

#[tokio::test]
async fn setup_stores_the_app_and_the_next_webhook_verifies_on_postgres() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let pg = FreshPostgres::create(&admin);
    setup_flow(&pg.url).await;
}

#[tokio::test]
async fn flags_win_over_the_stored_app() {
    let created = created();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let github = fake_github().await;
    let server = start(&url, &github, &[]);
    assert_eq!(complete_setup(&server).await.0, 200);
    assert!(server.terminate().success());

    let server = start(
        &url,
        &github,
        &[("BENCHGATE_WEBHOOK_SECRET", "flag-secret")],
    );
    assert_eq!(
        deliver(&server, &created.webhook_secret, "stored").await,
        401
    );
    assert_eq!(deliver(&server, "flag-secret", "flag").await, 202);
    let (status, page) = get(&server, "/github/setup", Some(ADMIN)).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("BENCHGATE_WEBHOOK_SECRET"),
        "the page says the flag wins: {page}"
    );
    assert!(
        page.contains("<code>octoapp</code>"),
        "and names the stored App: {page}"
    );
    assert!(server.terminate().success());
}

#[tokio::test]
async fn a_refused_code_is_a_clear_page_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let github = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex("^/app-manifests/.*/conversions$"))
        .respond_with(ResponseTemplate::new(404).set_body_json(serde_json::json!({
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest",
            "status": "404"
        })))
        .mount(&github)
        .await;
    let server = start(&url, &github, &[]);
    let (status, page) = complete_setup(&server).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("GitHub refused the code"), "{page}");
    let (_, page) = get(&server, "/github/setup", Some(ADMIN)).await;
    assert!(
        !page.contains("already stored"),
        "nothing was stored: {page}"
    );
    assert!(server.terminate().success());
}

/// Two servers on one database: the one that did not run the setup verifies the next delivery
/// with the stored secret at once, and starts writing to GitHub as the App.
async fn two_replicas(database_url: &str) {
    let created = created();
    let github = fake_github().await;
    let first = start(database_url, &github, &[]);
    let second = start(database_url, &github, &[]);
    assert_eq!(
        deliver(&second, &created.webhook_secret, "second-before").await,
        401
    );
    assert_eq!(complete_setup(&first).await.0, 200);
    assert_eq!(
        deliver(&second, &created.webhook_secret, "second-after").await,
        202,
        "the other replica reads the stored secret when a signature does not match its copy"
    );
    let mut lines = second.wait_for_log(
        "using the GitHub App stored by /github/setup",
        Duration::from_secs(60),
    );
    lines.extend(stop(first));
    lines.extend(stop(second));
    assert_no_secret_in(&lines, &created);
}

#[tokio::test]
async fn a_second_replica_uses_the_app_the_first_stored_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    two_replicas(&url).await;
}

#[tokio::test]
async fn a_second_replica_uses_the_app_the_first_stored_on_postgres() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let pg = FreshPostgres::create(&admin);
    two_replicas(&pg.url).await;
}

#[tokio::test]
async fn a_second_setup_replaces_the_app_without_a_restart() {
    const SECOND_CODE: &str = "b291c2b4e374d92cd7552e8ca01cbf38e5d2178a";
    let first = created();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let github = fake_github().await;
    // The documented example as a second App would answer it: its own id, name and secret.
    let mut second = fixture("rest/create-app-from-manifest.201.json");
    second["id"] = 2.into();
    second["slug"] = "octoapp-2".into();
    second["html_url"] = "https://github.com/apps/octoapp-2".into();
    second["webhook_secret"] = "second-app-webhook-secret".into();
    Mock::given(method("POST"))
        .and(path(format!("/app-manifests/{SECOND_CODE}/conversions")))
        .respond_with(ResponseTemplate::new(201).set_body_json(second))
        .expect(1)
        .mount(&github)
        .await;
    let server = start(&url, &github, &[]);
    assert_eq!(complete_setup(&server).await.0, 200);
    let mut lines = server.wait_for_log(
        "using the GitHub App stored by /github/setup",
        Duration::from_secs(60),
    );
    assert!(lines.last().unwrap().contains("\"app_id\":1"), "{lines:#?}");

    let (_, page) = get(&server, "/github/setup", Some(ADMIN)).await;
    assert!(
        page.contains("<code>octoapp</code>"),
        "the page names the App it replaces"
    );
    let state = state_in(&page, "/settings/apps/new");
    let callback = format!("/github/setup/callback?code={SECOND_CODE}&state={state}");
    let (status, page) = get(&server, &callback, None).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("https://github.com/apps/octoapp-2/installations/new"),
        "{page}"
    );

    assert_eq!(
        deliver(&server, &first.webhook_secret, "old-app").await,
        401
    );
    assert_eq!(
        deliver(&server, "second-app-webhook-secret", "new-app").await,
        202
    );
    let seen = server.wait_for_log(
        "using the GitHub App stored by /github/setup",
        Duration::from_secs(60),
    );
    assert!(seen.last().unwrap().contains("\"app_id\":2"), "{seen:#?}");
    lines.extend(seen);
    lines.extend(stop(server));
    assert_no_secret_in(&lines, &first);
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("second-app-webhook-secret"))
    );
}

#[tokio::test]
async fn github_out_of_reach_is_a_clear_page() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let github = MockServer::start().await;
    // Port 1 on loopback: nothing listens, the connection is refused.
    let server = start(
        &url,
        &github,
        &[("BENCHGATE_GITHUB_API_URL", "http://127.0.0.1:1")],
    );
    let (status, page) = complete_setup(&server).await;
    assert_eq!(status, 502, "{page}");
    assert!(
        page.contains("Could not complete the setup with GitHub"),
        "{page}"
    );
    assert!(page.contains("Start again at /github/setup"), "{page}");
    assert!(!page.contains(CODE), "the code is not repeated: {page}");
    assert!(server.terminate().success());
}
