//! The fake GitHub serving a real git repository, checked through benchgate's own client: the
//! commits a comparison lists, its pages, and the check runs GitHub refuses on unknown shas.

use std::path::Path;

use benchgate_github::client::{
    Auth, CheckRunRequest, CheckStatus, ClientConfig, GitHubClient, MAX_COMPARED_COMMITS,
    RepoTarget,
};
use secrecy::SecretString;

use super::{APP_ID, FakeGitHub, REPO, TOKEN, app_key_file, fixture};
use crate::support::{git, http};

fn app_client(github: &FakeGitHub) -> (GitHubClient, RepoTarget) {
    let pem = std::fs::read_to_string(app_key_file()).unwrap();
    let auth = Auth::App {
        app_id: APP_ID,
        private_key_pem: SecretString::from(pem),
    };
    (
        client(github, auth),
        RepoTarget::new(Some(1), REPO).unwrap(),
    )
}

/// For a fake started with `start_token`, which raw requests reach with [`TOKEN`] too.
fn token_client(github: &FakeGitHub) -> (GitHubClient, RepoTarget) {
    let auth = Auth::Token(SecretString::from(TOKEN));
    (client(github, auth), RepoTarget::new(None, REPO).unwrap())
}

fn client(github: &FakeGitHub, auth: Auth) -> GitHubClient {
    GitHubClient::new(ClientConfig {
        api_url: github.url(),
        auth,
        timeout: std::time::Duration::from_secs(10),
    })
    .unwrap()
}

/// `GET path` on the fake as GitHub answers it: status, `Link` header and JSON body.
async fn get(github: &FakeGitHub, path: &str) -> (u16, Option<String>, serde_json::Value) {
    let answer = http()
        .get(format!("{}{path}", github.url()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let link = answer
        .headers()
        .get("link")
        .map(|l| l.to_str().unwrap().to_owned());
    (status, link, answer.json().await.unwrap())
}

fn messages(answer: &serde_json::Value) -> Vec<&str> {
    answer["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["commit"]["message"].as_str().unwrap())
        .collect()
}

/// `main` at base, then a PR merged with a merge commit and one squashed: a merge group's
/// shapes. Returns (base, head).
fn merge_group_repository(dir: &Path) -> (String, String) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["checkout", "-q", "-b", "feature"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "feature one"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "feature two"]);
    git(dir, &["checkout", "-q", "main"]);
    let merge = "Merge pull request #7 from someone/feature\n\nfeature";
    git(dir, &["merge", "-q", "--no-ff", "-m", merge, "feature"]);
    std::fs::write(dir.join("bench.txt"), "faster\n").unwrap();
    git(dir, &["add", "bench.txt"]);
    git(
        dir,
        &["commit", "-q", "-m", "Make it faster (#8)\n\nsquashed"],
    );
    (base, git(dir, &["rev-parse", "HEAD"]))
}

#[tokio::test]
async fn a_comparison_lists_the_served_repositorys_commits_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = merge_group_repository(dir.path());
    let github = FakeGitHub::start(None).await;
    github.serve_repository(dir.path());
    let (client, repo) = app_client(&github);

    let commits = client.compare_commits(&repo, &base, &head).await.unwrap();
    let listed = git(
        dir.path(),
        &[
            "rev-list",
            "--reverse",
            "--topo-order",
            &format!("{base}..{head}"),
        ],
    );
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    assert_eq!(shas, listed.lines().collect::<Vec<_>>());
    let merge = &commits[2];
    assert_eq!(
        merge.message,
        "Merge pull request #7 from someone/feature\n\nfeature"
    );
    assert_eq!(merge.parents.len(), 2);
    assert_eq!(commits[3].message, "Make it faster (#8)\n\nsquashed");
    assert_eq!(commits[3].parents, vec![merge.sha.clone()]);

    // Behind its base, a head has nothing to compare; an unknown sha is GitHub's 404.
    assert!(
        client
            .compare_commits(&repo, &head, &base)
            .await
            .unwrap()
            .is_empty()
    );
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let err = client
        .compare_commits(&repo, &base, unknown)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert_eq!(github.refusals().len(), 1, "{github}");
}

#[tokio::test]
async fn a_long_comparison_is_paged_like_github_and_read_up_to_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "base"]);
    let base = git(dir.path(), &["rev-parse", "HEAD"]);
    // Plumbing: one process a commit, so 260 commits take a moment, not seconds.
    let tree = git(dir.path(), &["rev-parse", "HEAD^{tree}"]);
    let mut head = base.clone();
    for n in 1..=260 {
        let message = format!("commit {n}");
        head = git(
            dir.path(),
            &["commit-tree", &tree, "-p", &head, "-m", &message],
        );
    }
    let github = FakeGitHub::start_token(None).await;
    github.serve_repository(dir.path());
    let (client, repo) = token_client(&github);

    let commits = client.compare_commits(&repo, &base, &head).await.unwrap();
    assert_eq!(commits.len(), MAX_COMPARED_COMMITS);
    assert_eq!(commits[0].message, "commit 1");
    assert_eq!(commits[249].message, "commit 250");
    let pages = github
        .requests()
        .iter()
        .filter(|r| r.contains("/compare/"))
        .count();
    assert_eq!(pages, 3, "100 a page, the third read in part: {github}");

    // Asked without pages, GitHub lists the newest 250 and no Link.
    let compare = format!("/repos/{REPO}/compare/{base}...{head}");
    let (status, link, answer) = get(&github, &compare).await;
    assert_eq!((status, link), (200, None));
    assert_eq!(answer["total_commits"], 260);
    let listed = messages(&answer);
    assert_eq!((listed.len(), listed[0]), (250, "commit 11"));
    assert_eq!(listed[249], "commit 260");
}

#[tokio::test]
async fn a_comparison_is_shaped_like_githubs_recorded_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = merge_group_repository(dir.path());
    // A branch off base with a commit main lacks: main is then ahead of it and behind it.
    git(dir.path(), &["checkout", "-q", "-b", "side", &base]);
    git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "side"]);
    let side = git(dir.path(), &["rev-parse", "HEAD"]);
    let github = FakeGitHub::start_token(None).await;
    github.serve_repository(dir.path());

    let compare = format!("/repos/{REPO}/compare/{side}...main");
    let (status, link, answer) = get(&github, &compare).await;
    assert_eq!((status, link), (200, None));
    let keys = |v: &serde_json::Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let recorded = fixture("rest/compare-commits.ahead.200.json");
    assert_eq!(keys(&answer), keys(&recorded));
    assert_eq!(keys(&answer["commits"][0]), keys(&recorded["commits"][0]));
    assert_eq!(
        (&answer["status"], &answer["ahead_by"], &answer["behind_by"]),
        (&"diverged".into(), &4.into(), &1.into())
    );
    assert_eq!(answer["total_commits"], 4);
    assert_eq!(answer["merge_base_commit"]["sha"], base.as_str());
    assert_eq!(answer["base_commit"]["sha"], side.as_str());
    assert_eq!(answer["commits"][3]["sha"], head.as_str());
    assert_eq!(answer["files"][0]["filename"], "bench.txt");
    assert_eq!(answer["files"][0]["status"], "added");

    // Paged: a Link to the next page, and the changed files on page 1 only.
    let (_, link, first) = get(&github, &format!("{compare}?per_page=3")).await;
    assert!(link.unwrap().contains("rel=\"next\""));
    assert_eq!(messages(&first).len(), 3);
    assert!(first.get("files").is_some());
    let (_, link, second) = get(&github, &format!("{compare}?per_page=3&page=2")).await;
    assert!(link.is_none_or(|l| !l.contains("rel=\"next\"")));
    assert_eq!(messages(&second), vec!["Make it faster (#8)\n\nsquashed"]);
    assert!(second.get("files").is_none());

    let (status, _, answer) = get(&github, &format!("/repos/{REPO}/compare/{base}...nope")).await;
    assert_eq!((status, &answer["message"]), (404, &"Not Found".into()));
}

#[tokio::test]
async fn check_runs_are_refused_on_shas_the_repository_lacks_or_the_test_forbids() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = merge_group_repository(dir.path());
    let github = FakeGitHub::start(None).await;
    github.serve_repository(dir.path());
    let (client, repo) = app_client(&github);
    let on = |sha: &str| CheckRunRequest {
        name: "benchgate".into(),
        head_sha: sha.into(),
        status: CheckStatus::Queued,
        conclusion: None,
        details_url: None,
        external_id: None,
        output: None,
    };

    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let err = client
        .create_check_run(&repo, &on(unknown))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(422), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("No commit found for SHA: {unknown}")),
        "{err}"
    );
    client.create_check_run(&repo, &on(&base)).await.unwrap();

    github.refuse_checks_except(&[&head]);
    let err = client
        .create_check_run(&repo, &on(&base))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(422), "{err}");
    client.create_check_run(&repo, &on(&head)).await.unwrap();

    let refused: Vec<_> = github.refusals().into_iter().map(|r| r.2).collect();
    assert_eq!(
        refused,
        vec![
            format!("No commit found for SHA: {unknown}"),
            format!("No commit found for SHA: {base}"),
        ]
    );
    assert_eq!(github.checks().len(), 2);
}

/// Where a PR branched: its merge base with a base branch that moved on, the trees of the
/// merge base and the head, and how far each side moved; no merge base for unrelated
/// histories (GitHub's 404 "No common ancestor"), an error for an unknown sha.
#[tokio::test]
async fn the_branch_point_of_a_pr_is_its_merge_base_with_both_trees() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::write(d.join("a"), "0").unwrap();
    git(d, &["add", "a"]);
    git(d, &["commit", "-q", "-m", "c0"]);
    let c0 = git(d, &["rev-parse", "HEAD"]);
    git(d, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(d.join("notes"), "n").unwrap();
    git(d, &["add", "notes"]);
    git(d, &["commit", "-q", "-m", "notes"]);
    let feature = git(d, &["rev-parse", "HEAD"]);
    git(d, &["checkout", "-q", "main"]);
    for n in 1..=2 {
        std::fs::write(d.join("a"), n.to_string()).unwrap();
        git(d, &["commit", "-q", "-am", &format!("c{n}")]);
    }
    let tip = git(d, &["rev-parse", "HEAD"]);
    git(d, &["checkout", "-q", "--orphan", "unrelated"]);
    git(d, &["commit", "-q", "-m", "unrelated"]);
    let unrelated = git(d, &["rev-parse", "HEAD"]);
    let github = FakeGitHub::start(None).await;
    github.serve_repository(d);
    let (client, repo) = app_client(&github);

    let point = client
        .branch_point(&repo, &tip, &feature)
        .await
        .unwrap()
        .expect("a merge base");
    let tree = |sha: &str| git(d, &["rev-parse", &format!("{sha}^{{tree}}")]);
    assert_eq!(point.merge_base, c0);
    assert_eq!(point.merge_base_tree, tree(&c0));
    assert_eq!(point.head_tree, tree(&feature));
    assert_eq!((point.base_ahead_by, point.head_ahead_by), (2, 1));
    // A head that contains its base branches from the base itself.
    let up_to_date = client
        .branch_point(&repo, &c0, &feature)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (up_to_date.merge_base.as_str(), up_to_date.base_ahead_by),
        (c0.as_str(), 0)
    );

    assert_eq!(
        client.branch_point(&repo, &tip, &unrelated).await.unwrap(),
        None
    );
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let err = client.branch_point(&repo, &tip, unknown).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
