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

struct Setup {
    server: Server,
    database_url: String,
    gitlab: FakeGitlab,
    project: Project,
    agent: Option<Child>,
    _turn: Option<tokio::sync::MutexGuard<'static, ()>>,
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
    let project = Project::create(dir.path());
    {
        let mut s = gitlab.state();
        s.projects.insert(PROJECT_ID, PROJECT.to_owned());
        s.files.insert(
            (PROJECT_ID, "main".to_owned()),
            [(".benchgate.toml".to_owned(), repo_config(8))].into(),
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
        let path = format!(
            "{}/crates/gitlab/tests/fixtures/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut hook: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let web_url = format!("{}/{PROJECT}", self.gitlab.url());
        hook["project"]["id"] = json!(PROJECT_ID);
        hook["project"]["path_with_namespace"] = json!(PROJECT);
        hook["project"]["web_url"] = json!(web_url);
        hook["project"]["default_branch"] = json!("main");
        hook["project"]["git_http_url"] = json!(self.project.path.to_string_lossy());
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

    async fn deliver(&self, token: &str, uuid: &str, body: &Value) -> (u16, Value) {
        let answer = http()
            .post(self.server.url("/webhooks/gitlab"))
            .header("X-Gitlab-Event", "Merge Request Hook")
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
    {
        let state = s.gitlab.state();
        // GitLab answers 400 to a status set again to the state it has ("Cannot transition
        // …"), which benchgate takes as set; anything else refused is a call GitLab would not
        // take.
        let refused: Vec<&String> = state
            .refusals
            .iter()
            .filter(|r| !r.contains("Cannot transition status"))
            .collect();
        assert!(refused.is_empty(), "GitLab refused: {refused:?}");
        let people = state.notes[&(PROJECT_ID, MR)]
            .iter()
            .filter(|n| n.author == 77)
            .count();
        assert_eq!(people, 150, "nobody else's note was touched or removed");
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
    // A note (commands are not read on GitLab yet) and a push are answered, not acted on.
    let (status, answer) = send(
        "Note Hook",
        "note_merge_request.json",
        "6a3d4d4e-0000-4000-8000-000000000011",
    )
    .await;
    assert_eq!((status, answer["outcome"].as_str()), (202, Some("ignored")));
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
