//! Shared by the client tests: fixtures, a fake GitHub, and clients pointed at it.

use benchgate_github::client::{Auth, ClientConfig, GitHubClient, RepoTarget};
use secrecy::SecretString;
use std::time::Duration;
use wiremock::{MockServer, ResponseTemplate};

/// The recorded responses come from hub4j-test-org/github-api PR #461.
pub const REPO: &str = "hub4j-test-org/github-api";
pub const PR: u64 = 461;
pub const TOKEN: &str = "ghp_test_only_token";

/// A REST fixture's text (tests/fixtures/rest).
pub fn rest(name: &str) -> String {
    let path = format!("{}/tests/fixtures/rest/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A REST fixture as JSON, to change one field for a case the recordings lack.
pub fn rest_json(name: &str) -> serde_json::Value {
    serde_json::from_str(&rest(name)).unwrap()
}

/// A WireMock mapping's recorded response: status, inline body (if any) and headers.
pub fn mapping_response(name: &str) -> ResponseTemplate {
    let m = rest_json(name);
    let response = &m["response"];
    let mut template = ResponseTemplate::new(response["status"].as_u64().unwrap() as u16);
    for (k, v) in response["headers"].as_object().unwrap() {
        // Multi-valued headers (Vary) are irrelevant here; keep single values.
        if let Some(v) = v.as_str() {
            template = template.insert_header(k.as_str(), v);
        }
    }
    if let Some(body) = response["body"].as_str() {
        template = template.set_body_raw(body.as_bytes().to_vec(), "application/json");
    }
    template
}

/// A JSON response carrying `body` verbatim.
pub fn json(status: u16, body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.into().into_bytes(), "application/json")
}

pub fn token_client(server: &MockServer) -> GitHubClient {
    client(&server.uri(), Auth::Token(SecretString::from(TOKEN)))
}

pub fn client(api_url: &str, auth: Auth) -> GitHubClient {
    GitHubClient::new(ClientConfig {
        api_url: api_url.to_owned(),
        auth,
        timeout: Duration::from_secs(5),
    })
    .unwrap()
}

/// The test-only App key (tests/fixtures/test-only-app-key.pem; see the README there).
pub fn app_auth() -> Auth {
    let pem = include_str!("../fixtures/test-only-app-key.pem");
    Auth::App {
        app_id: 12345,
        private_key_pem: SecretString::from(pem),
    }
}

pub fn target(installation_id: Option<u64>) -> RepoTarget {
    RepoTarget::new(installation_id, REPO).unwrap()
}

/// The login the recorded comments were written by (hub4j-test-org PR #461).
pub const COMMENTER: &str = "yrodiere";

/// Answers `GET /user` (a token's identity) with the recorded user, logged in as `login`.
pub async fn mount_user(server: &MockServer, login: &str) {
    let mut user = rest_json("get-authenticated-user.200.json");
    user["login"] = serde_json::json!(login);
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .and(wiremock::matchers::path("/user"))
        .respond_with(json(200, user.to_string()))
        .mount(server)
        .await;
}
