//! The commits between a merge group's base and head, from GitHub's recorded compare answers
//! (hub4j-test-org/github-api, e46a9f3…8051615: nine commits, merges and squash merges).

use crate::common::*;
use benchgate_github::client::{ComparedCommit, MAX_COMPARED_COMMITS};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer};

const BASE: &str = "e46a9f3f2ac55db96de3c5c4706f2813b3a96465";
const HEAD: &str = "8051615eff597f4e49f4f47625e6fc2b49f26bfc";

fn compare_path() -> String {
    format!("/repos/{REPO}/compare/{BASE}...{HEAD}")
}

/// The shas of a recorded answer's commits, in its order.
fn shas(answer: &Value) -> Vec<String> {
    answer["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_commits_of_a_comparison_are_read_oldest_first() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(compare_path()))
        .and(query_param("per_page", "100"))
        .respond_with(json(200, rest("compare-commits.ahead.200.json")))
        .expect(1)
        .mount(&server)
        .await;
    let commits = token_client(&server)
        .compare_commits(&target(None), BASE, HEAD)
        .await
        .unwrap();
    assert_eq!(
        commits.iter().map(|c| c.sha.clone()).collect::<Vec<_>>(),
        shas(&rest_json("compare-commits.ahead.200.json"))
    );
    assert_eq!(
        commits[1],
        ComparedCommit {
            sha: "b82ea8eaa8e90f8d4074354721a3ea12d3af8930".into(),
            message:
                "Merge pull request #533 from sullis/jackson-2.9.9.3\n\njackson-databind 2.9.9.3"
                    .into(),
            parents: vec![
                "b1b830c268613430de00532c0a9a6e6ba6563fe5".into(),
                "499d91f9f846b0087b2a20cf3648b49dc9c2eeef".into(),
            ],
        }
    );
    assert_eq!(commits[8].message, "squashMerge (#333)\n\nsquash merge");
    assert_eq!(commits[8].sha, HEAD);
}

#[tokio::test]
async fn every_page_of_a_comparison_is_read() {
    let server = MockServer::start().await;
    // Page 1 as GitHub answered `?per_page=5`, with its Link header pointed at this server.
    let mapping = rest_json("compare-commits.per_page-5.page-1.200.wiremock-mapping.json");
    let link = mapping["response"]["headers"]["Link"]
        .as_str()
        .unwrap()
        .replace("https://api.github.com", &server.uri());
    Mock::given(method("GET"))
        .and(path(compare_path()))
        .respond_with(
            json(200, rest("compare-commits.per_page-5.page-1.200.json"))
                .insert_header("link", link.as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    // Page 2 was not recorded: the last four commits of the whole answer, without the changed
    // files, which GitHub sends on page 1 only.
    let whole = rest_json("compare-commits.ahead.200.json");
    let mut second = whole.clone();
    second["commits"] = json!(whole["commits"].as_array().unwrap()[5..]);
    second.as_object_mut().unwrap().remove("files");
    Mock::given(method("GET"))
        .and(path(format!(
            "/repositories/206888201/compare/{BASE}...{HEAD}"
        )))
        .and(query_param("page", "2"))
        .respond_with(json(200, second.to_string()))
        .expect(1)
        .mount(&server)
        .await;
    let commits = token_client(&server)
        .compare_commits(&target(None), BASE, HEAD)
        .await
        .unwrap();
    assert_eq!(
        commits.into_iter().map(|c| c.sha).collect::<Vec<_>>(),
        shas(&whole)
    );
}

#[tokio::test]
async fn reading_stops_at_the_most_commits_benchgate_reads() {
    let server = MockServer::start().await;
    // 400 commits, 100 a page, made from the recorded commit: no recording is that long.
    let whole = rest_json("compare-commits.ahead.200.json");
    let pages = 4;
    for page in 1..=pages {
        let mut answer = whole.clone();
        answer["total_commits"] = json!(pages * 100);
        answer["ahead_by"] = json!(pages * 100);
        answer["commits"] = json!(
            (0..100)
                .map(|i| {
                    let mut c = whole["commits"][0].clone();
                    c["sha"] = json!(format!("{:040x}", (page - 1) * 100 + i));
                    c
                })
                .collect::<Vec<_>>()
        );
        let next = format!(
            "<{}{}?per_page=100&page={}>; rel=\"next\"",
            server.uri(),
            compare_path(),
            page + 1
        );
        let mut template = json(200, answer.to_string());
        if page < pages {
            template = template.insert_header("link", next.as_str());
        }
        let first_page = page == 1;
        Mock::given(method("GET"))
            .and(path(compare_path()))
            .and(move |r: &wiremock::Request| {
                let asked = r.url.query_pairs().find(|(k, _)| k == "page");
                match asked {
                    None => first_page,
                    Some((_, n)) => n == page.to_string().as_str(),
                }
            })
            .respond_with(template)
            // The 250th commit is on page 3: page 4 is never asked for.
            .expect(if page < pages { 1 } else { 0 })
            .mount(&server)
            .await;
    }
    let commits = token_client(&server)
        .compare_commits(&target(None), BASE, HEAD)
        .await
        .unwrap();
    assert_eq!(commits.len(), MAX_COMPARED_COMMITS);
    assert_eq!(commits[249].sha, format!("{:040x}", 249));
}

#[tokio::test]
async fn a_sha_the_repository_lacks_is_not_found() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(compare_path()))
        .respond_with(json(404, rest("not-found.404.json")))
        .expect(1)
        .mount(&server)
        .await;
    let err = token_client(&server)
        .compare_commits(&target(None), BASE, HEAD)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(!err.is_retryable(), "{err}");
}
