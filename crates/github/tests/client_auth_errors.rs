//! App authentication (JWT → installation token, cached) and the retryable/permanent split.

use std::time::Duration;

use crate::common::*;
use benchgate_github::client::{Auth, GitHubError};
use chrono::Utc;
use serde_json::json;
use wiremock::matchers::{bearer_token, header_regex, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PERMISSION: &str = "/repos/hub4j-test-org/github-api/collaborators/kohsuke/permission";
const ACCESS_TOKENS: &str = "/app/installations/42/access_tokens";

/// The recorded token answer (token redacted to "bogus" upstream), valid for `valid_for`.
fn token_answer(valid_for: chrono::Duration) -> ResponseTemplate {
    let mut body = rest_json("create-installation-access-token.minimal.201.json");
    body["expires_at"] = json!((Utc::now() + valid_for).to_rfc3339());
    json(201, body.to_string())
}

async fn permission_ok(server: &MockServer, expected_calls: u64) {
    Mock::given(method("GET"))
        .and(path(PERMISSION))
        .and(bearer_token("bogus"))
        .respond_with(json(200, rest("collaborator-permission.admin.200.json")))
        .expect(expected_calls)
        .mount(server)
        .await;
}

#[tokio::test]
async fn installation_token_is_minted_once_and_reused() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ACCESS_TOKENS))
        // The App authenticates with a signed JWT: three base64url parts.
        .and(header_regex(
            "authorization",
            r"^Bearer [\w-]+\.[\w-]+\.[\w-]+$",
        ))
        .respond_with(token_answer(chrono::Duration::hours(1)))
        .expect(1)
        .mount(&server)
        .await;
    permission_ok(&server, 3).await;
    let client = client(&server.uri(), app_auth());
    for _ in 0..3 {
        client
            .collaborator_permission(&target(Some(42)), "kohsuke")
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_token_about_to_expire_is_renewed() {
    let server = MockServer::start().await;
    // Expires in 2 minutes: inside the renewal margin, so every call mints a new one.
    Mock::given(method("POST"))
        .and(path(ACCESS_TOKENS))
        .respond_with(token_answer(chrono::Duration::minutes(2)))
        .expect(2)
        .mount(&server)
        .await;
    permission_ok(&server, 2).await;
    let client = client(&server.uri(), app_auth());
    for _ in 0..2 {
        client
            .collaborator_permission(&target(Some(42)), "kohsuke")
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_401_forgets_the_token_and_is_retryable() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ACCESS_TOKENS))
        .respond_with(token_answer(chrono::Duration::hours(1)))
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(PERMISSION))
        .respond_with(json(401, r#"{"message":"Bad credentials"}"#))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    permission_ok(&server, 1).await;
    let client = client(&server.uri(), app_auth());
    let err = client
        .collaborator_permission(&target(Some(42)), "kohsuke")
        .await
        .unwrap_err();
    assert!(err.is_retryable(), "{err}");
    client
        .collaborator_permission(&target(Some(42)), "kohsuke")
        .await
        .unwrap();
}

#[tokio::test]
async fn app_auth_without_an_installation_is_a_configuration_error() {
    let server = MockServer::start().await;
    let err = client(&server.uri(), app_auth())
        .collaborator_permission(&target(None), "kohsuke")
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::Config(_)), "{err}");
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn server_errors_and_rate_limits_are_retryable_with_the_asked_delay() {
    // (response, retryable, retry_after)
    let reset = (Utc::now().timestamp() + 120).to_string();
    let table: Vec<(ResponseTemplate, bool, Option<Duration>)> = vec![
        (json(500, r#"{"message":"Server Error"}"#), true, None),
        (
            json(503, "<html>unicorn</html>").insert_header("retry-after", "5"),
            true,
            Some(Duration::from_secs(5)),
        ),
        (
            json(429, r#"{"message":"slow down"}"#).insert_header("retry-after", "30"),
            true,
            Some(Duration::from_secs(30)),
        ),
        (
            json(403, r#"{"message":"API rate limit exceeded"}"#)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.as_str()),
            true,
            None, // checked as a range below: the reset is ~120 s away
        ),
        (json(422, r#"{"message":"Validation Failed"}"#), false, None),
        (json(404, r#"{"message":"Not Found"}"#), false, None),
    ];
    for (i, (response, retryable, retry_after)) in table.into_iter().enumerate() {
        let server = MockServer::start().await;
        // Exactly one request: octocrab's own retries are off, the outbox owns retrying.
        Mock::given(method("POST"))
            .respond_with(response)
            .expect(1)
            .mount(&server)
            .await;
        let err = token_client(&server)
            .post_comment(&target(None), PR, "hi")
            .await
            .unwrap_err();
        assert_eq!(err.is_retryable(), retryable, "row {i}: {err}");
        if i == 3 {
            let wait = err.retry_after().expect("rate limit reset gives a delay");
            assert!(
                (Duration::from_secs(100)..=Duration::from_secs(121)).contains(&wait),
                "{wait:?}"
            );
        } else {
            assert_eq!(err.retry_after(), retry_after, "row {i}: {err}");
        }
    }
}

#[tokio::test]
async fn an_unreachable_github_is_retryable() {
    // wiremock pools its servers, so take a free port from the OS and close it instead.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let err = client(&uri, Auth::Token(TOKEN.to_owned().into()))
        .post_comment(&target(None), PR, "hi")
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::Transport { .. }), "{err}");
    assert!(err.is_retryable());
}

#[test]
fn credentials_never_show_in_debug() {
    let token = format!("{:?}", Auth::Token(TOKEN.to_owned().into()));
    assert!(!token.contains(TOKEN), "{token}");
    let app = format!("{:?}", app_auth());
    assert!(!app.contains("PRIVATE KEY"), "{app}");
    assert!(app.contains("12345"), "{app}");
}

#[test]
fn a_bad_private_key_is_refused_at_start() {
    let auth = Auth::App {
        app_id: 1,
        private_key_pem: "not a key".to_owned().into(),
    };
    let err = benchgate_github::client::GitHubClient::new(
        benchgate_github::client::ClientConfig::new(auth),
    )
    .unwrap_err();
    assert!(matches!(err, GitHubError::Config(_)), "{err}");
    assert!(!err.to_string().contains("not a key"), "{err}");
}
