//! The PR comment: found again by its hidden marker over all pages, edited in place, never doubled.

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{
    bearer_token, body_json, header, method, path, query_param, query_param_is_missing,
};
use wiremock::{Mock, MockServer};

const COMMENTS: &str = "/repos/hub4j-test-org/github-api/issues/461/comments";

#[tokio::test]
async fn upsert_creates_the_comment_when_none_is_marked() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param("per_page", "100"))
        .and(header("accept", "application/vnd.github+json"))
        .and(bearer_token(TOKEN))
        .respond_with(mapping_response(
            "list-issue-comments.empty.200.wiremock-mapping.json",
        ))
        .expect(1)
        .mount(&server)
        .await;
    let want_body = "<!-- benchgate:linux-x86-quiet -->\nrunning, 1 of 10 rounds";
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .and(body_json(json!({ "body": want_body })))
        .respond_with(json(201, rest("create-issue-comment.on-pr.201.json")))
        .expect(1)
        .mount(&server)
        .await;

    mount_user(&server, COMMENTER).await;
    let done = token_client(&server)
        .upsert_marked_comment(
            &target(None),
            PR,
            "linux-x86-quiet",
            "running, 1 of 10 rounds",
        )
        .await
        .unwrap();
    assert!(done.created);
    assert_eq!(done.comment.id, 1254853699);
}

#[tokio::test]
async fn upsert_edits_the_marked_comment_on_a_later_page_instead_of_adding_one() {
    let server = MockServer::start().await;
    let marker = "<!-- benchgate:linux-x86-quiet -->";
    // Page 1: two comments by people (recorded). Page 2: the recorded single comment, whose
    // body is replaced by benchgate's marked report.
    let next = format!(
        "<{}{COMMENTS}?per_page=100&page=2>; rel=\"next\", <{}{COMMENTS}?per_page=100&page=2>; rel=\"last\"",
        server.uri(),
        server.uri()
    );
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param_is_missing("page"))
        .respond_with(
            json(200, rest("list-issue-comments.two.200.json"))
                .insert_header("link", next.as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    let mut page2 = rest_json("list-issue-comments.one.200.json");
    page2[0]["id"] = json!(777);
    page2[0]["body"] = json!(format!("{marker}\nold report"));
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param("page", "2"))
        .and(bearer_token(TOKEN)) // the token goes with followed links too
        .respond_with(json(200, page2.to_string()))
        .expect(1)
        .mount(&server)
        .await;
    let mut edited = rest_json("create-issue-comment.on-pr.201.json");
    edited["id"] = json!(777);
    Mock::given(method("PATCH"))
        .and(path("/repos/hub4j-test-org/github-api/issues/comments/777"))
        .and(body_json(
            json!({ "body": format!("{marker}\nnew report") }),
        ))
        .respond_with(json(200, edited.to_string()))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json(500, "{}"))
        .expect(0)
        .mount(&server)
        .await;

    mount_user(&server, COMMENTER).await;
    let body_with_marker = format!("{marker}\nnew report");
    let done = token_client(&server)
        .upsert_marked_comment(&target(None), PR, "linux-x86-quiet", &body_with_marker)
        .await
        .unwrap();
    assert!(!done.created);
    assert_eq!(done.comment.id, 777);
}

#[tokio::test]
async fn a_marker_for_another_runner_label_is_not_ours() {
    let server = MockServer::start().await;
    let mut page = rest_json("list-issue-comments.two.200.json");
    page[0]["body"] = json!("<!-- benchgate:arm64 -->\nreport");
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(json(200, page.to_string()))
        .mount(&server)
        .await;
    mount_user(&server, COMMENTER).await;
    let found = token_client(&server)
        .find_marked_comment(&target(None), PR, "linux-x86-quiet")
        .await
        .unwrap();
    assert_eq!(found, None);
    let found = token_client(&server)
        .find_marked_comment(&target(None), PR, "arm64")
        .await
        .unwrap();
    assert_eq!(found.map(|c| c.id), Some(1254853699));
}

#[tokio::test]
async fn enterprise_base_path_is_kept_for_calls_and_page_links() {
    let server = MockServer::start().await;
    let base = format!("{}/api/v3", server.uri());
    let enterprise_comments = format!("/api/v3{COMMENTS}");
    let next = format!("<{base}{COMMENTS}?per_page=100&page=2>; rel=\"next\"");
    Mock::given(method("GET"))
        .and(path(enterprise_comments.as_str()))
        .and(query_param_is_missing("page"))
        .respond_with(
            json(200, rest("list-issue-comments.two.200.json"))
                .insert_header("link", next.as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(enterprise_comments.as_str()))
        .and(query_param("page", "2"))
        .respond_with(mapping_response(
            "list-issue-comments.empty.200.wiremock-mapping.json",
        ))
        .expect(1)
        .mount(&server)
        .await;
    let mut user = rest_json("get-authenticated-user.200.json");
    user["login"] = json!(COMMENTER);
    Mock::given(method("GET"))
        .and(path("/api/v3/user"))
        .respond_with(json(200, user.to_string()))
        .expect(1)
        .mount(&server)
        .await;
    let client = client(
        &base,
        benchgate_github::client::Auth::Token(TOKEN.to_owned().into()),
    );
    let found = client
        .find_marked_comment(&target(None), PR, "x")
        .await
        .unwrap();
    assert_eq!(found, None);
}

#[tokio::test]
async fn a_plain_reply_is_posted_as_given() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .and(body_json(json!({ "body": "First comment" })))
        .respond_with(json(201, rest("create-issue-comment.on-pr.201.json")))
        .expect(1)
        .mount(&server)
        .await;
    let c = token_client(&server)
        .post_comment(&target(None), PR, "First comment")
        .await
        .unwrap();
    assert_eq!(c.body.as_deref(), Some("First comment"));
    assert!(c.html_url.unwrap().ends_with("#issuecomment-1254853699"));
}

#[tokio::test]
async fn a_marker_in_someone_elses_comment_is_never_ours() {
    let server = MockServer::start().await;
    let marker = "<!-- benchgate:linux-x86-quiet -->";
    // Someone pastes benchgate's marker; the App's own comment comes after it.
    let mut foreign = rest_json("list-issue-comments.one.200.json")[0].clone();
    foreign["id"] = json!(1);
    foreign["body"] = json!(format!("{marker}\nlooks faster to me"));
    let mut ours = rest_json("issue-comment.performed-via-github-app.json");
    ours["id"] = json!(2);
    ours["body"] = json!(format!("{marker}\nreport"));
    let app_id = ours["performed_via_github_app"]["id"].as_u64().unwrap();
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(json(200, json!([foreign.clone(), ours]).to_string()))
        .mount(&server)
        .await;
    mount_user(&server, "someone-else").await;

    // A token client finds neither: it wrote neither.
    let found = token_client(&server)
        .find_marked_comment(&target(None), PR, "linux-x86-quiet")
        .await
        .unwrap();
    assert_eq!(found, None);
    // The App whose id is on the second comment finds that one, not the first.
    Mock::given(method("POST"))
        .and(path("/app/installations/7/access_tokens"))
        .respond_with(json(201, rest("create-installation-access-token.201.json")))
        .mount(&server)
        .await;
    let pem = include_str!("fixtures/test-only-app-key.pem");
    let app = client(
        &server.uri(),
        benchgate_github::client::Auth::App {
            app_id,
            private_key_pem: pem.to_owned().into(),
        },
    );
    let found = app
        .find_marked_comment(&target(Some(7)), PR, "linux-x86-quiet")
        .await
        .unwrap();
    assert_eq!(found.map(|c| c.id), Some(2));
    // And a foreign comment is never edited: with only it present, upsert creates a new one.
    Mock::given(method("PATCH"))
        .respond_with(json(500, "{}"))
        .expect(0)
        .mount(&server)
        .await;
}
