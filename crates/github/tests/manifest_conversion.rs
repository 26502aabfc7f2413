//! The manifest flow's code exchange against a fake GitHub answering GitHub's documented
//! example response (tests/fixtures/github/rest/create-app-from-manifest.201.json).

use std::time::Duration;

use benchgate_github::client::{GitHubError, convert_manifest_code};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn documented_answer() -> serde_json::Value {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/github/rest/create-app-from-manifest.201.json"
    );
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

#[tokio::test]
async fn a_code_is_exchanged_for_the_apps_id_key_and_webhook_secret() {
    let github = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(
            "/app-manifests/a180b1a3d263c81bc6441d7b990bae27d4c10679/conversions",
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(documented_answer()))
        .expect(1)
        .mount(&github)
        .await;
    let app = convert_manifest_code(
        &github.uri(),
        "a180b1a3d263c81bc6441d7b990bae27d4c10679",
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(app.id, 1);
    assert_eq!(app.slug, "octoapp");
    assert_eq!(app.owner.as_ref().unwrap().login, "github");
    assert_eq!(
        app.webhook_secret.as_deref(),
        Some("e340154128314309424b7c8e90325147d99fdafa")
    );
    assert!(app.pem.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
    assert_eq!(
        app.install_url(),
        "https://github.com/apps/octoapp/installations/new"
    );
    let debug = format!("{app:?}");
    assert!(
        !debug.contains("e3401541") && !debug.contains("MIIE"),
        "{debug}"
    );
    let received = &github.received_requests().await.unwrap()[0];
    assert!(
        received.headers.get("authorization").is_none(),
        "the code is the only credential"
    );
}

#[tokio::test]
async fn a_refused_code_is_an_error_that_never_names_the_code() {
    let github = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_json(serde_json::json!({
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"
        })))
        .mount(&github)
        .await;
    let err = convert_manifest_code(&github.uri(), "used0code", Duration::from_secs(10))
        .await
        .unwrap_err();
    assert!(
        matches!(err, GitHubError::Status { status: 404, .. }),
        "{err:?}"
    );
    assert!(!err.to_string().contains("used0code"), "{err}");

    let err = convert_manifest_code(&github.uri(), "../x", Duration::from_secs(10))
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::Config(_)), "{err:?}");
    assert_eq!(
        github.received_requests().await.unwrap().len(),
        1,
        "no request for ../x"
    );
}
