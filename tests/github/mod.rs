//! A fake GitHub for the end-to-end tests: wiremock answering with the recorded bodies in
//! tests/fixtures/github/rest, keeping the comments and check runs it was sent, and failing on
//! demand (500 and 429 with `Retry-After`) to exercise the outbox.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const REPO: &str = "Codertocat/Hello-World";

/// Reads a fixture under tests/fixtures/github.
pub fn fixture(path: &str) -> Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/github")
        .join(path);
    serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap()
}

/// One comment as the fake keeps it.
#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub body: String,
    pub edits: usize,
}

/// One check run as the fake keeps it (its latest state).
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: u64,
    pub head_sha: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: String,
    pub summary: String,
}

#[derive(Default)]
struct State {
    config: Option<String>,
    comments: Vec<Comment>,
    checks: Vec<CheckRun>,
    reactions: Vec<(u64, String)>,
    permissions: Vec<(String, String)>,
    /// Answers for the next comment calls: (status, Retry-After).
    failures: Vec<(u16, Option<u64>)>,
    failed: usize,
    /// Answers for the next `.benchgate.toml` reads: (status, Retry-After).
    config_failures: Vec<(u16, Option<u64>)>,
    config_failed: usize,
    next_id: u64,
}

/// The fake; cheap to clone (shared state).
#[derive(Clone)]
pub struct FakeGitHub {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

impl FakeGitHub {
    /// Starts the fake serving `.benchgate.toml` = `config` on every ref.
    pub async fn start(config: Option<&str>) -> Self {
        let server = MockServer::start().await;
        let state = Arc::new(Mutex::new(State {
            config: config.map(str::to_owned),
            next_id: 1000,
            ..State::default()
        }));
        Mock::given(any())
            .respond_with(Responder(state.clone()))
            .mount(&server)
            .await;
        FakeGitHub {
            server: Arc::new(server),
            state,
        }
    }

    pub fn url(&self) -> String {
        self.server.uri()
    }

    /// `login` gets `fixture` (e.g. `collaborator-permission.read.200.json`) as permission.
    pub fn set_permission(&self, login: &str, fixture: &str) {
        let mut s = self.state.lock().unwrap();
        s.permissions.push((login.to_owned(), fixture.to_owned()));
    }

    /// The next comment calls fail with these answers, in order.
    pub fn fail_comment_calls(&self, answers: &[(u16, Option<u64>)]) {
        self.state.lock().unwrap().failures = answers.to_vec();
    }

    /// The next `.benchgate.toml` reads fail with these answers, in order.
    pub fn fail_config_reads(&self, answers: &[(u16, Option<u64>)]) {
        self.state.lock().unwrap().config_failures = answers.to_vec();
    }

    /// How many injected `.benchgate.toml` failures were answered.
    pub fn config_failures_answered(&self) -> usize {
        self.state.lock().unwrap().config_failed
    }

    /// How many injected failures were answered.
    pub fn failures_answered(&self) -> usize {
        self.state.lock().unwrap().failed
    }

    pub fn comments(&self) -> Vec<Comment> {
        self.state.lock().unwrap().comments.clone()
    }

    /// Comments carrying the report marker of `label`.
    pub fn report_comments(&self, label: &str) -> Vec<Comment> {
        let marker = format!("<!-- benchgate:{label} -->");
        self.comments()
            .into_iter()
            .filter(|c| c.body.contains(&marker))
            .collect()
    }

    pub fn checks(&self) -> Vec<CheckRun> {
        self.state.lock().unwrap().checks.clone()
    }

    pub fn reactions(&self) -> Vec<(u64, String)> {
        self.state.lock().unwrap().reactions.clone()
    }

    /// Every request the fake received, as `METHOD /path`.
    pub async fn requests(&self) -> Vec<String> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| format!("{} {}", r.method, r.url.path()))
            .collect()
    }
}

struct Responder(Arc<Mutex<State>>);

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut s = self.0.lock().unwrap();
        let path = request.url.path().to_owned();
        let method = request.method.as_str().to_owned();
        let prefix = format!("/repos/{REPO}");
        let Some(rest) = path.strip_prefix(&prefix) else {
            return ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}));
        };
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let is_comment_call = rest.contains("/comments");
        if is_comment_call && !s.failures.is_empty() {
            let (status, retry_after) = s.failures.remove(0);
            s.failed += 1;
            let mut answer =
                ResponseTemplate::new(status).set_body_json(json!({"message": "injected failure"}));
            if let Some(secs) = retry_after {
                answer = answer.insert_header("Retry-After", secs.to_string().as_str());
            }
            return answer;
        }
        match (method.as_str(), rest) {
            ("GET", "/contents/.benchgate.toml") if !s.config_failures.is_empty() => {
                let (status, retry_after) = s.config_failures.remove(0);
                s.config_failed += 1;
                let mut answer = ResponseTemplate::new(status)
                    .set_body_json(json!({"message": "injected failure"}));
                if let Some(secs) = retry_after {
                    answer = answer.insert_header("Retry-After", secs.to_string().as_str());
                }
                answer
            }
            ("GET", "/contents/.benchgate.toml") => match &s.config {
                Some(text) => ResponseTemplate::new(200).set_body_string(text.clone()),
                None => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
            },
            ("GET", r) if r.starts_with("/pulls/") && r.ends_with("/files") => {
                ResponseTemplate::new(200).set_body_json(json!([]))
            }
            ("GET", r) if r.starts_with("/issues/") && r.ends_with("/comments") => {
                let template = fixture("rest/list-issue-comments.one.200.json")[0].clone();
                let list: Vec<Value> = s
                    .comments
                    .iter()
                    .map(|c| comment_json(&template, c.id, &c.body))
                    .collect();
                ResponseTemplate::new(200).set_body_json(list)
            }
            ("POST", r) if r.starts_with("/issues/comments/") && r.ends_with("/reactions") => {
                let id: u64 = r.split('/').nth(3).unwrap().parse().unwrap();
                let content = body["content"].as_str().unwrap_or_default().to_owned();
                s.reactions.push((id, content.clone()));
                let mut answer = fixture("rest/create-reaction.issue-comment.201.json");
                answer["content"] = json!(content);
                ResponseTemplate::new(201).set_body_json(answer)
            }
            ("POST", r) if r.starts_with("/issues/") && r.ends_with("/comments") => {
                s.next_id += 1;
                let id = s.next_id;
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                s.comments.push(Comment {
                    id,
                    body: text.clone(),
                    edits: 0,
                });
                let template = fixture("rest/create-issue-comment.on-pr.201.json");
                ResponseTemplate::new(201).set_body_json(comment_json(&template, id, &text))
            }
            ("PATCH", r) if r.starts_with("/issues/comments/") => {
                let id: u64 = r.rsplit('/').next().unwrap().parse().unwrap();
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                let Some(c) = s.comments.iter_mut().find(|c| c.id == id) else {
                    return ResponseTemplate::new(404)
                        .set_body_json(json!({"message": "Not Found"}));
                };
                c.body = text.clone();
                c.edits += 1;
                let template = fixture("rest/create-issue-comment.on-pr.201.json");
                ResponseTemplate::new(200).set_body_json(comment_json(&template, id, &text))
            }
            ("POST", "/check-runs") => {
                s.next_id += 1;
                let run = check_run(s.next_id, &body, None);
                s.checks.push(run.clone());
                ResponseTemplate::new(201)
                    .set_body_json(check_json("rest/create-check-run.completed.201.json", &run))
            }
            ("PATCH", r) if r.starts_with("/check-runs/") => {
                let id: u64 = r.rsplit('/').next().unwrap().parse().unwrap();
                let Some(i) = s.checks.iter().position(|c| c.id == id) else {
                    return ResponseTemplate::new(404)
                        .set_body_json(json!({"message": "Not Found"}));
                };
                let run = check_run(id, &body, Some(&s.checks[i]));
                s.checks[i] = run.clone();
                ResponseTemplate::new(200)
                    .set_body_json(check_json("rest/update-check-run.completed.200.json", &run))
            }
            ("GET", r) if r.starts_with("/collaborators/") && r.ends_with("/permission") => {
                let login = r.split('/').nth(2).unwrap();
                match s.permissions.iter().find(|(l, _)| l == login) {
                    Some((_, file)) => {
                        ResponseTemplate::new(200).set_body_json(fixture(&format!("rest/{file}")))
                    }
                    None => {
                        ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}))
                    }
                }
            }
            _ => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
        }
    }
}

fn comment_json(template: &Value, id: u64, body: &str) -> Value {
    let mut c = template.clone();
    c["id"] = json!(id);
    c["body"] = json!(body);
    c
}

fn check_run(id: u64, body: &Value, old: Option<&CheckRun>) -> CheckRun {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    CheckRun {
        id,
        head_sha: text(&body["head_sha"])
            .or_else(|| old.map(|o| o.head_sha.clone()))
            .unwrap_or_default(),
        status: text(&body["status"])
            .or_else(|| old.map(|o| o.status.clone()))
            .unwrap_or_else(|| "queued".into()),
        conclusion: text(&body["conclusion"]).or_else(|| old.and_then(|o| o.conclusion.clone())),
        title: text(&body["output"]["title"]).unwrap_or_default(),
        summary: text(&body["output"]["summary"]).unwrap_or_default(),
    }
}

fn check_json(fixture_path: &str, run: &CheckRun) -> Value {
    let mut c = fixture(fixture_path);
    c["id"] = json!(run.id);
    c["head_sha"] = json!(run.head_sha);
    c["status"] = json!(run.status);
    c["conclusion"] = json!(run.conclusion);
    c
}
