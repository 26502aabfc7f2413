//! Check runs, reactions, permissions, file reads and changed files against recorded answers.

use crate::common::*;
use benchgate_github::client::{
    CheckConclusion, CheckRunOutput, CheckRunRequest, CheckRunUpdate, CheckStatus, Permission,
};
use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const REPO_PATH: &str = "/repos/hub4j-test-org/github-api";

#[tokio::test]
async fn check_run_is_created_with_exactly_the_fields_given() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO_PATH}/check-runs")))
        .and(body_json(json!({
            "name": "benchgate",
            "head_sha": "89a9ae301e35e667756034fdc933b1fc94f63fc1",
            "status": "completed",
            "conclusion": "success",
            "details_url": "http://nowhere.net/stuff",
            "output": { "title": "Some Title", "summary": "what happened…" }
        })))
        .respond_with(json(201, rest("create-check-run.completed.201.json")))
        .expect(1)
        .mount(&server)
        .await;
    let request = CheckRunRequest {
        name: "benchgate".into(),
        head_sha: "89a9ae301e35e667756034fdc933b1fc94f63fc1".into(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Success),
        details_url: Some("http://nowhere.net/stuff".into()),
        external_id: None,
        output: Some(CheckRunOutput {
            title: "Some Title".into(),
            summary: "what happened…".into(),
        }),
    };
    let run = token_client(&server)
        .create_check_run(&target(None), &request)
        .await
        .unwrap();
    assert_eq!(
        (run.id, run.status, run.conclusion),
        (
            1424883286,
            CheckStatus::Completed,
            Some(CheckConclusion::Success)
        )
    );
}

#[tokio::test]
async fn queued_check_run_sends_no_conclusion() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO_PATH}/check-runs")))
        .and(body_json(
            json!({ "name": "benchgate", "head_sha": "abc", "status": "in_progress" }),
        ))
        .respond_with(json(201, rest("create-check-run.in_progress.201.json")))
        .expect(1)
        .mount(&server)
        .await;
    let request = CheckRunRequest {
        name: "benchgate".into(),
        head_sha: "abc".into(),
        status: CheckStatus::InProgress,
        conclusion: None,
        details_url: None,
        external_id: None,
        output: None,
    };
    let run = token_client(&server)
        .create_check_run(&target(None), &request)
        .await
        .unwrap();
    assert_eq!(
        (run.status, run.conclusion),
        (CheckStatus::InProgress, None)
    );
}

#[tokio::test]
async fn check_run_update_patches_only_what_changes() {
    let server = MockServer::start().await;
    Mock::given(method("PATCH"))
        .and(path(format!("{REPO_PATH}/check-runs/1424883037")))
        .and(body_json(json!({
            "conclusion": "success",
            "output": { "title": "faster by 3.1% [1.2%, 5.0%]", "summary": "| bench | change |" }
        })))
        .respond_with(json(200, rest("update-check-run.completed.200.json")))
        .expect(1)
        .mount(&server)
        .await;
    let update = CheckRunUpdate {
        conclusion: Some(CheckConclusion::Success),
        output: Some(CheckRunOutput {
            title: "faster by 3.1% [1.2%, 5.0%]".into(),
            summary: "| bench | change |".into(),
        }),
        ..CheckRunUpdate::default()
    };
    let run = token_client(&server)
        .update_check_run(&target(None), 1424883037, &update)
        .await
        .unwrap();
    assert_eq!(run.conclusion, Some(CheckConclusion::Success));
}

#[tokio::test]
async fn eyes_reaction_is_added_to_the_comment() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!(
            "{REPO_PATH}/issues/comments/8547251/reactions"
        )))
        .and(body_json(json!({ "content": "eyes" })))
        .respond_with(json(201, rest("create-reaction.issue-comment.201.json")))
        .expect(1)
        .mount(&server)
        .await;
    assert!(
        token_client(&server)
            .add_eyes_reaction(&target(None), 8547251)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn collaborator_permissions_from_recorded_answers() {
    let table = [
        (
            "collaborator-permission.admin.200.json",
            Permission::Admin,
            true,
        ),
        (
            "collaborator-permission.maintain.200.json",
            Permission::Maintain,
            true,
        ),
        (
            "collaborator-permission.read.200.json",
            Permission::Read,
            false,
        ),
        (
            "collaborator-permission.none.200.json",
            Permission::None,
            false,
        ),
    ];
    for (fixture, want, can_write) in table {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(format!(
                "{REPO_PATH}/collaborators/someone/permission"
            )))
            .respond_with(json(200, rest(fixture)))
            .expect(1)
            .mount(&server)
            .await;
        let got = token_client(&server)
            .collaborator_permission(&target(None), "someone")
            .await
            .unwrap();
        assert_eq!((got, got.can_write()), (want, can_write), "{fixture}");
    }
}

#[tokio::test]
async fn permission_lookup_refused_is_a_permanent_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/collaborators/jglick/permission")))
        .respond_with(mapping_response(
            "collaborator-permission.403.wiremock-mapping.json",
        ))
        .expect(1)
        .mount(&server)
        .await;
    let err = token_client(&server)
        .collaborator_permission(&target(None), "jglick")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403));
    assert!(!err.is_retryable(), "{err}");
    assert!(err.to_string().contains("Must have push access"), "{err}");
}

#[tokio::test]
async fn config_file_is_read_raw_from_the_base_branch_and_missing_is_none() {
    let server = MockServer::start().await;
    let toml = "[benchmark]\nrun = \"cargo bench\"\n";
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/contents/.benchgate.toml")))
        .and(query_param("ref", "release/1.x"))
        .and(header("accept", "application/vnd.github.raw+json"))
        .respond_with(ResponseTemplate::new(200).set_body_string(toml))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/contents/.benchgate.toml")))
        .and(query_param("ref", "main"))
        .respond_with(json(404, r#"{"message":"Not Found","documentation_url":"https://docs.github.com/rest/repos/contents#get-repository-content"}"#))
        .expect(1)
        .mount(&server)
        .await;
    let client = token_client(&server);
    let found = client
        .read_file(&target(None), ".benchgate.toml", "release/1.x")
        .await
        .unwrap();
    assert_eq!(found.as_deref(), Some(toml));
    assert_eq!(
        client
            .read_file(&target(None), ".benchgate.toml", "main")
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn changed_files_are_listed_with_renames() {
    let server = MockServer::start().await;
    // Shape of GET /pulls/{n}/files (no recording was collected; only the fields read).
    let body = json!([
        { "filename": "src/lib.rs", "status": "modified" },
        { "filename": "benches/new.rs", "status": "renamed", "previous_filename": "benches/old.rs" }
    ]);
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/pulls/461/files")))
        .and(query_param("per_page", "100"))
        .respond_with(json(200, body.to_string()))
        .expect(1)
        .mount(&server)
        .await;
    let files = token_client(&server)
        .list_pr_files(&target(None), PR)
        .await
        .unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(
        files[1].previous_filename.as_deref(),
        Some("benches/old.rs")
    );
}
