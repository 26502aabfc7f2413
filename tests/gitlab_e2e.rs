//! GitLab end to end: the real `benchgate serve` and `benchgate agent`, a real git repository,
//! real SQLite, GitLab's recorded Merge Request Hook bodies (crates/gitlab/tests/fixtures) sent
//! with the hook's secret token, and the strict fake GitLab of crates/gitlab, which refuses a
//! status without the merge request's pipeline, a description over 255 characters or an edit of
//! someone else's note, and keeps every write.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::github_e2e::{CLAIM_WAIT_SECS, LABEL, Project, count_rows, repo_config};
use crate::gitlab_fake::{BOT, FakeGitlab, MergeRequest, TOKEN};
use crate::support::agent::add_runner_with_labels;
use crate::support::{BIN, Server, git, http, measuring_turn, spawn_server, wait_until};

const HOOK_TOKEN: &str = "e2e-gitlab-hook-token";
const PROJECT_ID: u64 = 42;
const PROJECT: &str = "acme/widgets";
const MR: u64 = 7;
const PIPELINE: u64 = 555;
/// The head's work: 1.5x the base's 2,000,000 spins.
const SLOWER: u64 = 3_000_000;
/// Rounds a job may run: the gate stops as soon as it is decided (about 6 rounds for these
/// heads on a quiet machine), and the rest is room for a machine busy with other tests.
const ROUNDS: u32 = 24;

struct Setup {
    server: Server,
    database_url: String,
    gitlab: FakeGitlab,
    project: Project,
    agent: Option<Child>,
    _turn: Option<crate::support::Turn>,
    dir: tempfile::TempDir,
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(agent) = &mut self.agent {
            let _ = agent.kill();
            let _ = agent.wait();
        }
    }
}

async fn setup() -> Setup {
    let gitlab = FakeGitlab::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut project = Project::create(dir.path());
    // The merge request's head does 1.5x the base's work.
    git(
        &project.path,
        &["checkout", "-q", "--detach", &project.base],
    );
    std::fs::write(project.path.join("iterations"), SLOWER.to_string()).unwrap();
    git(&project.path, &["commit", "-qam", "head: 1.5x the work"]);
    project.head = git(&project.path, &["rev-parse", "HEAD"]);
    {
        let mut s = gitlab.state();
        s.projects.insert(PROJECT_ID, PROJECT.to_owned());
        s.files.insert(
            (PROJECT_ID, "main".to_owned()),
            [(".benchgate.toml".to_owned(), repo_config(ROUNDS))].into(),
        );
        s.commits.insert((PROJECT_ID, project.base.clone()));
    }
    gitlab.member(PROJECT_ID, BOT, 30);
    gitlab.merge_request(
        PROJECT_ID,
        MR,
        MergeRequest {
            sha: project.head.clone(),
            base_sha: project.base.clone(),
            pipeline: Some(PIPELINE),
        },
    );
    let database_url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let url = gitlab.url();
    let claim_wait = CLAIM_WAIT_SECS.to_string();
    // No GitHub credentials at all: a GitLab-only server.
    let server = spawn_server(
        &database_url,
        &[
            ("BENCHGATE_GITLAB_URL", &url),
            ("BENCHGATE_GITLAB_TOKEN", TOKEN),
            (
                "BENCHGATE_GITLAB_HOOK_TOKEN",
                &format!("old-token,{HOOK_TOKEN}"),
            ),
            ("BENCHGATE_PUBLIC_URL", "https://bench.example"),
            ("BENCHGATE_COMMENT_INTERVAL", "1"),
            ("BENCHGATE_OUTBOX_BACKOFF_MS", "100"),
            ("BENCHGATE_CLAIM_WAIT", &claim_wait),
            ("BENCHGATE_PROFILE_RUNS", "0"),
        ],
    );
    Setup {
        server,
        database_url,
        gitlab,
        project,
        agent: None,
        _turn: None,
        dir,
    }
}

impl Setup {
    async fn start_agent(&mut self) {
        self._turn = Some(measuring_turn().await);
        let token = add_runner_with_labels(&self.database_url, "gl-e2e-1", LABEL);
        let child = Command::new(BIN)
            .args(["agent", "--server", &self.server.url(""), "--work-dir"])
            .arg(self.dir.path().join("agent"))
            .args(["--max-backoff", "1"])
            .env("BENCHGATE_TOKEN", token)
            .env("RUST_LOG", "warn")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.agent = Some(child);
    }

    /// GitLab's recorded Merge Request Hook body, moved onto this project, merge request and
    /// head.
    fn merge_request_hook(&self, fixture: &str, head: &str, oldrev: Option<&str>) -> Value {
        let mut hook = self.hook(fixture);
        let mr = &mut hook["object_attributes"];
        mr["iid"] = json!(MR);
        mr["target_branch"] = json!("main");
        mr["source_project_id"] = json!(PROJECT_ID);
        mr["target_project_id"] = json!(PROJECT_ID);
        mr["draft"] = json!(false);
        mr["work_in_progress"] = json!(false);
        mr["last_commit"]["id"] = json!(head);
        match oldrev {
            Some(old) => mr["oldrev"] = json!(old),
            None => {
                if let Some(o) = mr.as_object_mut() {
                    o.remove("oldrev");
                }
            }
        }
        hook
    }

    /// GitLab's recorded hook body `fixture`, its project moved onto this one.
    fn hook(&self, fixture: &str) -> Value {
        let path = format!(
            "{}/crates/gitlab/tests/fixtures/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut hook: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let project = &mut hook["project"];
        project["id"] = json!(PROJECT_ID);
        project["path_with_namespace"] = json!(PROJECT);
        project["web_url"] = json!(format!("{}/{PROJECT}", self.gitlab.url()));
        project["default_branch"] = json!("main");
        project["git_http_url"] = json!(self.project.path.to_string_lossy());
        hook
    }

    /// GitLab's recorded Note Hook body for note `text` by `user` on this merge request, whose
    /// head is `head`; the note exists on the fake as GitLab would have it.
    fn note_hook(&self, user: (u64, &str), text: &str, head: &str) -> Value {
        let id = self.gitlab.note_by(PROJECT_ID, MR, user.0, text);
        let mut hook = self.hook("note_merge_request.json");
        hook["user"]["id"] = json!(user.0);
        hook["user"]["username"] = json!(user.1);
        hook["object_attributes"]["id"] = json!(id);
        hook["object_attributes"]["note"] = json!(text);
        hook["object_attributes"]["created_at"] = json!(
            chrono::Utc::now()
                .format("%Y-%m-%d %H:%M:%S UTC")
                .to_string()
        );
        let mr = &mut hook["merge_request"];
        mr["iid"] = json!(MR);
        mr["source_project_id"] = json!(PROJECT_ID);
        mr["target_project_id"] = json!(PROJECT_ID);
        mr["last_commit"]["id"] = json!(head);
        hook
    }

    async fn deliver(&self, token: &str, uuid: &str, body: &Value) -> (u16, Value) {
        self.deliver_event("Merge Request Hook", token, uuid, body)
            .await
    }

    async fn deliver_event(
        &self,
        event: &str,
        token: &str,
        uuid: &str,
        body: &Value,
    ) -> (u16, Value) {
        let answer = http()
            .post(self.server.url("/webhooks/gitlab"))
            .header("X-Gitlab-Event", event)
            .header("X-Gitlab-Token", token)
            .header("X-Gitlab-Event-UUID", uuid)
            .header("Content-Type", "application/json")
            .body(serde_json::to_vec(body).unwrap())
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or(Value::Null))
    }

    /// The final status on `sha`, once one is.
    async fn final_status(&self, sha: &str) -> crate::gitlab_fake::Status {
        wait_until(
            "a final commit status",
            Duration::from_secs(240),
            async || {
                let s = self.gitlab.state();
                s.statuses
                    .iter()
                    .rev()
                    .find(|st| st.sha == sha)
                    .filter(|st| matches!(st.state.as_str(), "success" | "failed"))
                    .cloned()
                    .ok_or_else(|| {
                        format!(
                            "statuses {:?}; refusals {:?}",
                            s.statuses
                                .iter()
                                .map(|s| (&s.sha[..7], &s.state))
                                .collect::<Vec<_>>(),
                            s.refusals
                        )
                    })
            },
        )
        .await
    }

    /// GitLab's recorded Push Hook body for `commits` (oldest first) pushed onto `before` on
    /// the default branch, delivered; the step is scheduled.
    async fn push_to_main(&self, uuid: &str, before: &str, commits: &[&str]) {
        let after = *commits.last().expect("a push has commits");
        let mut push = self.hook("push.json");
        push["ref"] = json!("refs/heads/main");
        push["before"] = json!(before);
        push["after"] = json!(after);
        push["checkout_sha"] = json!(after);
        let listed = push["commits"][0].clone();
        let commits: Vec<Value> = commits
            .iter()
            .map(|sha| {
                let mut c = listed.clone();
                c["id"] = json!(sha);
                c
            })
            .collect();
        push["total_commits_count"] = json!(commits.len());
        push["commits"] = json!(commits);
        let (status, answer) = self
            .deliver_event("Push Hook", HOOK_TOKEN, uuid, &push)
            .await;
        assert_eq!(
            (status, answer["outcome"].as_str()),
            (202, Some("main_scheduled")),
            "{answer}"
        );
    }

    fn bot_notes(&self) -> Vec<String> {
        let s = self.gitlab.state();
        s.notes
            .get(&(PROJECT_ID, MR))
            .map(|n| {
                n.iter()
                    .filter(|n| n.author == BOT.0)
                    .map(|n| n.body.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[tokio::test]
async fn a_slower_merge_request_gets_one_note_and_a_failed_status_on_its_pipeline() {
    let mut s = setup().await;
    s.gitlab.member(PROJECT_ID, (77, "reviewer"), 30);
    // 150 notes by people before benchgate's, some quoting its marker: it pages past them and
    // edits only its own.
    for i in 0..150 {
        let body = if i % 50 == 0 {
            "quoting <!-- benchgate:benchgate --> here".to_owned()
        } else {
            format!("review note {i}")
        };
        s.gitlab.note_by(PROJECT_ID, MR, 77, &body);
    }
    let open = s.merge_request_hook("merge_request_open.json", &s.project.head, None);

    // A wrong token is refused before anything is recorded.
    let (status, _) = s
        .deliver(
            "not-the-token",
            "6a3d4d4e-0000-4000-8000-000000000001",
            &open,
        )
        .await;
    assert_eq!(status, 401);

    let uuid = "6a3d4d4e-0000-4000-8000-000000000002";
    let (status, answer) = s.deliver(HOOK_TOKEN, uuid, &open).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["outcome"], "scheduled", "{answer}");
    // GitLab redelivers with the same UUID: nothing is done twice.
    let (status, answer) = s.deliver(HOOK_TOKEN, uuid, &open).await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (200, Some("duplicate"))
    );

    s.start_agent().await;
    let first = s.final_status(&s.project.head).await;
    assert_eq!(first.state, "failed", "{first:?}");
    assert_eq!(first.pipeline_id, Some(PIPELINE), "{first:?}");
    assert_eq!(first.name, "benchgate");
    assert!(first.description.chars().count() <= 255);
    wait_until("the note", Duration::from_secs(30), async || {
        let notes = s.bot_notes();
        match notes.as_slice() {
            [one] if one.contains("slower") => Ok(()),
            other => Err(format!("{} notes by the bot: {other:?}", other.len())),
        }
    })
    .await;
    let note = s.bot_notes().remove(0);
    assert!(note.contains('%') && note.contains("rounds"), "{note}");
    // A GitLab maintainer reads merge requests, not PRs.
    assert!(
        !note
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "PR" || w == "PRs"),
        "{note}"
    );

    // A push of new commits: the new head is measured, and the same note says so.
    std::fs::write(s.project.path.join("iterations"), "12000000").unwrap();
    git(
        &s.project.path,
        &["commit", "-qam", "head: six times the work"],
    );
    let head2 = git(&s.project.path, &["rev-parse", "HEAD"]);
    s.gitlab.merge_request(
        PROJECT_ID,
        MR,
        MergeRequest {
            sha: head2.clone(),
            base_sha: s.project.base.clone(),
            pipeline: Some(PIPELINE + 1),
        },
    );
    s.gitlab
        .state()
        .commits
        .insert((PROJECT_ID, s.project.head.clone()));
    let update = s.merge_request_hook(
        "merge_request_update_commits.json",
        &head2,
        Some(&s.project.head),
    );
    let (status, answer) = s
        .deliver(HOOK_TOKEN, "6a3d4d4e-0000-4000-8000-000000000003", &update)
        .await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (202, Some("scheduled"))
    );
    let second = s.final_status(&head2).await;
    assert_eq!(second.state, "failed", "{second:?}");
    assert_eq!(second.pipeline_id, Some(PIPELINE + 1), "{second:?}");
    let short = &head2[..7];
    wait_until(
        "the note to name the new head",
        Duration::from_secs(30),
        async || {
            let notes = s.bot_notes();
            match notes.as_slice() {
                [one] if one.contains(short) => Ok(()),
                other => Err(format!("{} notes by the bot: {other:?}", other.len())),
            }
        },
    )
    .await;
    // `/rebench 4` from a Developer adds four rounds and gets 👀; from a Guest, a reply.
    s.gitlab.member(PROJECT_ID, (88, "dev"), 30);
    s.gitlab.member(PROJECT_ID, (99, "guest"), 10);
    let jobs = "SELECT COUNT(*) FROM jobs WHERE state = 'done' AND kind = 'comparison'";
    let done_before = count_rows(&s.database_url, jobs).await;
    let dev_note = s.note_hook((88, "dev"), "/rebench 4", &head2);
    let (status, answer) = s
        .deliver_event(
            "Note Hook",
            HOOK_TOKEN,
            "6a3d4d4e-0000-4000-8000-000000000004",
            &dev_note,
        )
        .await;
    assert_eq!((status, answer["outcome"].as_str()), (202, Some("command")));
    let dev_note_id = dev_note["object_attributes"]["id"].as_u64().unwrap();
    wait_until(
        "the Developer's rounds",
        Duration::from_secs(120),
        async || {
            let done = count_rows(&s.database_url, jobs).await;
            let eyes = s
                .gitlab
                .state()
                .awards
                .contains(&(dev_note_id, "eyes".to_owned()));
            match (done > done_before, eyes) {
                (true, true) => Ok(()),
                other => Err(format!("rounds ran, 👀: {other:?}")),
            }
        },
    )
    .await;
    let guest_note = s.note_hook((99, "guest"), "/rebench 4", &head2);
    let (status, _) = s
        .deliver_event(
            "Note Hook",
            HOOK_TOKEN,
            "6a3d4d4e-0000-4000-8000-000000000005",
            &guest_note,
        )
        .await;
    assert_eq!(status, 202);
    wait_until("the Guest's reply", Duration::from_secs(30), async || {
        let notes = s.bot_notes();
        match notes.iter().find(|n| n.contains("@guest")) {
            Some(reply) if reply.contains("Guest (10)") && reply.contains("Developers") => Ok(()),
            _ => Err(format!("{notes:?}")),
        }
    })
    .await;
    let guest_note_id = guest_note["object_attributes"]["id"].as_u64().unwrap();
    assert!(
        !s.gitlab
            .state()
            .awards
            .iter()
            .any(|(note, _)| *note == guest_note_id),
        "a refused command gets no 👀"
    );
    assert_eq!(
        count_rows(&s.database_url, jobs).await,
        done_before + 1,
        "the Guest's command ran nothing"
    );
    {
        let state = s.gitlab.state();
        // GitLab answers 400 to a status set again to the state it has ("Cannot transition
        // …"), which benchgate takes as set; anything else refused is a call GitLab would not
        // take.
        let refused = refused_calls(&state);
        assert!(refused.is_empty(), "GitLab refused: {refused:?}");
        // Below Ultimate, GitLab answers 401 to status checks: asked on a decided gate, and
        // nothing is ever posted to them.
        let asked = state
            .refusals
            .iter()
            .filter(|r| r.starts_with("401 GET") && r.contains("/status_checks"))
            .count();
        assert!(asked >= 1, "{:?}", state.refusals);
        assert!(
            state.check_responses.is_empty(),
            "{:?}",
            state.check_responses
        );
        let people = state.notes[&(PROJECT_ID, MR)]
            .iter()
            .filter(|n| n.author == 77)
            .count();
        assert_eq!(people, 150, "nobody else's note was touched or removed");
        let own = state.notes[&(PROJECT_ID, MR)]
            .iter()
            .filter(|n| n.author == BOT.0)
            .count();
        assert_eq!(own, 2, "one report note and one reply");
    }
    let rows = count_rows(
        &s.database_url,
        "SELECT COUNT(*) FROM repositories WHERE forge = 'gitlab'",
    )
    .await;
    assert_eq!(rows, 1);
}

#[tokio::test]
async fn hooks_benchgate_does_not_act_on_are_answered_and_recorded_once() {
    let s = setup().await;
    let fixtures = format!(
        "{}/crates/gitlab/tests/fixtures",
        env!("CARGO_MANIFEST_DIR")
    );
    let send = async |event: &str, file: &str, uuid: &str| {
        let body = std::fs::read(format!("{fixtures}/{file}")).unwrap();
        let answer = http()
            .post(s.server.url("/webhooks/gitlab"))
            .header("X-Gitlab-Event", event)
            .header("X-Gitlab-Token", HOOK_TOKEN)
            .header("X-Gitlab-Event-UUID", uuid)
            .body(body)
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json::<Value>().await.unwrap_or(Value::Null))
    };
    // A push is answered, not acted on (the default branch is not followed on GitLab yet),
    // and a note from another GitLab host is not read.
    let (status, answer) = send(
        "Note Hook",
        "note_merge_request.json",
        "6a3d4d4e-0000-4000-8000-000000000011",
    )
    .await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (202, Some("other_instance"))
    );
    let (status, answer) = send(
        "Push Hook",
        "push.json",
        "6a3d4d4e-0000-4000-8000-000000000012",
    )
    .await;
    assert_eq!((status, answer["outcome"].as_str()), (202, Some("ignored")));
    // A merge request on another GitLab host than the configured one is not scheduled: its
    // calls would go to the wrong API.
    let (status, answer) = send(
        "Merge Request Hook",
        "merge_request_open.json",
        "6a3d4d4e-0000-4000-8000-000000000013",
    )
    .await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (202, Some("other_instance"))
    );
    // A body that is not the hook its header names is refused, and nothing of it is kept.
    let (status, _) = send(
        "Merge Request Hook",
        "push.json",
        "6a3d4d4e-0000-4000-8000-000000000014",
    )
    .await;
    assert_eq!(status, 400);
    let deliveries = count_rows(
        &s.database_url,
        "SELECT COUNT(*) FROM webhook_deliveries WHERE delivery_id LIKE 'gitlab:%'",
    )
    .await;
    assert_eq!(deliveries, 3);
    let outbox = count_rows(&s.database_url, "SELECT COUNT(*) FROM outbox").await;
    assert_eq!(outbox, 0);
}

#[tokio::test]
async fn a_push_to_the_default_branch_is_compared_with_its_parent_and_a_regression_opens_an_issue()
{
    let mut s = setup().await;
    // The pushed commit holds the config the step is read from, with issues on.
    let config = format!(
        "{}\n[main]\nissues = true\nissue_labels = [\"perf\"]\n",
        repo_config(ROUNDS)
    );
    s.gitlab.state().files.insert(
        (PROJECT_ID, s.project.head.clone()),
        [(".benchgate.toml".to_owned(), config)].into(),
    );
    s.push_to_main(
        "6a3d4d4e-0000-4000-8000-000000000021",
        &s.project.base,
        &[&s.project.head],
    )
    .await;
    s.start_agent().await;
    wait_until(
        "the regression issue",
        Duration::from_secs(240),
        async || {
            let state = s.gitlab.state();
            let issues = state.issues.get(&PROJECT_ID).cloned().unwrap_or_default();
            match issues.as_slice() {
                [issue]
                    if issue["labels"]
                        .as_array()
                        .is_some_and(|l| l.iter().any(|l| l == "benchgate"))
                        && issue["description"]
                            .as_str()
                            .is_some_and(|d| d.contains("<!-- benchgate:main-regression:")) =>
                {
                    Ok(issue["title"].as_str().unwrap_or_default().to_owned())
                }
                other => Err(format!("issues {other:?}; refusals {:?}", state.refusals)),
            }
        },
    )
    .await;
    let steps = count_rows(
        &s.database_url,
        &format!(
            "SELECT COUNT(*) FROM comparisons WHERE pr_number IS NULL AND base_sha = '{}' \
             AND head_sha = '{}' AND state = 'done'",
            s.project.base, s.project.head
        ),
    )
    .await;
    assert_eq!(
        steps, 1,
        "the push is one step: its commit against its parent"
    );
}

#[tokio::test]
async fn a_gitlab_url_without_its_tokens_says_at_start_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let database_url = format!("sqlite://{}", dir.path().join("benchgate.db").display());
    let server = spawn_server(
        &database_url,
        &[("BENCHGATE_GITLAB_URL", "https://gitlab.example")],
    );
    server.wait_for_log("--gitlab-url without a token", Duration::from_secs(20));
    server.wait_for_log(
        "/webhooks/gitlab refuses every delivery",
        Duration::from_secs(20),
    );
    let answer = http()
        .post(server.url("/webhooks/gitlab"))
        .header("X-Gitlab-Event", "Merge Request Hook")
        .header("X-Gitlab-Token", "anything")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 401);
}

/// An external status check (Ultimate) named as the gate, pointing at
/// `/webhooks/gitlab/status-check` and signed with the hook's secret: GitLab fails it after its
/// pending timeout while no runner has answered; benchgate answers it when the gate decides (a
/// 2x faster head: `passed`), and again when someone presses "Retry". Another service's check
/// is never answered; unsigned or wrongly signed requests are refused.
#[tokio::test]
async fn an_external_status_check_is_answered_when_the_gate_decides_and_on_retry() {
    let mut s = setup().await;
    git(
        &s.project.path,
        &["checkout", "-q", "--detach", &s.project.base],
    );
    std::fs::write(s.project.path.join("iterations"), "1000000").unwrap();
    git(&s.project.path, &["commit", "-qam", "head: half the work"]);
    let head = git(&s.project.path, &["rev-parse", "HEAD"]);
    s.gitlab.merge_request(
        PROJECT_ID,
        MR,
        MergeRequest {
            sha: head.clone(),
            base_sha: s.project.base.clone(),
            pipeline: Some(PIPELINE),
        },
    );
    let url = s.server.url("/webhooks/gitlab/status-check");
    let ours = s.gitlab.status_check(PROJECT_ID, "benchgate", &url);
    let theirs =
        s.gitlab
            .status_check(PROJECT_ID, "compliance", "https://compliance.example/check");
    s.gitlab.state().status_check_timeout = Duration::from_millis(500);

    let mut request = s.hook("status_check_request.json");
    request["object_attributes"]["iid"] = json!(MR);
    request["object_attributes"]["last_commit"]["id"] = json!(head);
    request["external_approval_rule"] =
        json!({"id": ours, "name": "benchgate", "external_url": url});
    let body = serde_json::to_vec(&request).unwrap();
    let ask = async |signature: Option<String>| {
        let mut post = http()
            .post(&url)
            .header("Content-Type", "application/json")
            .body(body.clone());
        if let Some(sig) = signature {
            post = post.header("X-Gitlab-Signature", sig);
        }
        let answer = post.send().await.unwrap();
        let status = answer.status().as_u16();
        (status, answer.json::<Value>().await.unwrap_or(Value::Null))
    };
    let signed = benchgate_gitlab::token::SigningSecrets::new([HOOK_TOKEN]).sign(&body);
    let stranger = benchgate_gitlab::token::SigningSecrets::new(["guess"]).sign(&body);
    assert_eq!(ask(None).await.0, 401, "unsigned");
    assert_eq!(ask(Some(stranger)).await.0, 401, "signed by a stranger");
    // GitLab asks as the merge request opens: nothing is decided yet, and nothing is measured
    // on a status check's word.
    let (status, answer) = ask(Some(signed.clone())).await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (202, Some("waiting")),
        "{answer}"
    );
    assert_eq!(
        count_rows(&s.database_url, "SELECT COUNT(*) FROM comparisons").await,
        0
    );

    let open = s.merge_request_hook("merge_request_open.json", &head, None);
    let (status, answer) = s
        .deliver(HOOK_TOKEN, "6a3d4d4e-0000-4000-8000-0000000000c1", &open)
        .await;
    assert_eq!(status, 202, "{answer}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        s.gitlab.status_check_state(PROJECT_ID, MR, ours),
        "failed",
        "GitLab fails a check left pending past its timeout"
    );

    s.start_agent().await;
    let last = s.final_status(&head).await;
    assert_eq!(last.state, "success", "{last:?}");
    wait_until(
        "the status check's answer",
        Duration::from_secs(30),
        async || match s.gitlab.status_check_state(PROJECT_ID, MR, ours).as_str() {
            "passed" => Ok(()),
            other => Err(other.to_owned()),
        },
    )
    .await;

    // "Retry": pending again, and GitLab sends the merge request once more.
    s.gitlab.retry_status_check(PROJECT_ID, MR, ours);
    let (status, answer) = ask(Some(signed)).await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (202, Some("answered")),
        "{answer}"
    );
    wait_until(
        "the answer after Retry",
        Duration::from_secs(30),
        async || {
            let st = s.gitlab.state();
            let answers: Vec<&str> = st
                .check_responses
                .iter()
                .filter(|r| r.check == ours)
                .map(|r| r.status.as_str())
                .collect();
            let retried = answers.iter().rposition(|a| *a == "pending");
            match retried {
                Some(at) if answers[at + 1..].contains(&"passed") => Ok(()),
                _ => Err(format!("{answers:?}")),
            }
        },
    )
    .await;
    let st = s.gitlab.state();
    assert!(
        st.check_responses
            .iter()
            .all(|r| r.check != theirs && r.sha == head),
        "another service's check, or another head, answered: {:?}",
        st.check_responses
    );
    let refused = refused_calls(&st);
    assert!(refused.is_empty(), "GitLab refused: {refused:?}");
}

/// What the fake GitLab refused, but for what benchgate asks knowing GitLab may refuse it: a
/// status set again to the state it has (400 "Cannot transition …", taken as set) and the
/// status checks of a project below Ultimate (401).
fn refused_calls(state: &crate::gitlab_fake::State) -> Vec<&String> {
    state
        .refusals
        .iter()
        .filter(|r| !r.contains("Cannot transition status"))
        .filter(|r| !(r.starts_with("401 GET") && r.contains("/status_checks")))
        .collect()
}

/// One push of three commits to the default branch, the second 1.5x the work: the step opens
/// an episode, the culprit search reads the range from GitLab's compare (the fake answers from
/// the real repository), and the issue names the slower commit by sha: never as `#N`, which on
/// GitLab is an issue.
#[tokio::test]
async fn a_push_of_several_commits_that_regresses_names_its_culprit_in_the_issue() {
    let mut s = setup().await;
    let path = s.project.path.clone();
    git(&path, &["checkout", "-q", "--detach", &s.project.base]);
    let commit = |message: &str| {
        git(&path, &["add", "-A"]);
        git(&path, &["commit", "-qm", message]);
        git(&path, &["rev-parse", "HEAD"])
    };
    std::fs::write(path.join("README"), "parser docs\n").unwrap();
    let docs = commit("Document the parser");
    std::fs::write(path.join("iterations"), SLOWER.to_string()).unwrap();
    // A squash commit from a GitHub habit: "(#3)" would name issue #3 on GitLab.
    let slower = commit("Slower parser (#3)\n\nSee merge request acme/widgets!14");
    std::fs::write(path.join("NOTES"), "notes\n").unwrap();
    let notes = commit("Release notes");
    let config = format!(
        "{}\n[main]\nschedule = \"off\"\nissues = true\n",
        repo_config(ROUNDS)
    );
    {
        let mut st = s.gitlab.state();
        st.repo_dirs.insert(PROJECT_ID, path.clone());
        for sha in [&s.project.base, &docs, &slower, &notes] {
            st.files.insert(
                (PROJECT_ID, sha.clone()),
                [(".benchgate.toml".to_owned(), config.clone())].into(),
            );
            st.commits.insert((PROJECT_ID, sha.clone()));
        }
    }
    s.push_to_main(
        "6a3d4d4e-0000-4000-8000-0000000000b1",
        &s.project.base,
        &[&docs, &slower, &notes],
    )
    .await;
    s.start_agent().await;
    let short = slower[..7].to_owned();
    let issue = wait_until(
        "the issue to name the culprit",
        Duration::from_secs(360),
        async || {
            let state = s.gitlab.state();
            let issues = state.issues.get(&PROJECT_ID).cloned().unwrap_or_default();
            match issues.as_slice() {
                [issue]
                    if issue["description"]
                        .as_str()
                        .is_some_and(|d| d.contains("**Culprit:")) =>
                {
                    Ok(issue.clone())
                }
                other => Err(format!(
                    "issues {:?}; refusals {:?}",
                    other.iter().map(|i| &i["title"]).collect::<Vec<_>>(),
                    state.refusals
                )),
            }
        },
    )
    .await;
    let body = issue["description"].as_str().unwrap();
    let title = issue["title"].as_str().unwrap();
    assert!(body.contains(&format!("**Culprit: `{short}` +")), "{body}");
    assert!(title.contains(&format!("culprit {short}")), "{title}");
    assert!(
        !title.contains("(#") && !body.contains(&format!("`{short}` (#3)")),
        "{title}\n{body}"
    );
    let refused = refused_calls(&s.gitlab.state()).len();
    assert_eq!(refused, 0, "{:?}", s.gitlab.state().refusals);
}
