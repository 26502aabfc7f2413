//! A fake GitLab (REST v4) as strict as GitLab where benchgate depends on it: a token on every
//! call (`PRIVATE-TOKEN` or `Authorization: Bearer`, else 401), notes paginated as GitLab does
//! (20 a page by default, at most 100; `X-Next-Page`, `X-Total`), a note edited only by its
//! author (403), commit statuses with GitLab's states, a description of at most 255
//! characters, no transition to the state a status already has (400 "Cannot transition status
//! via …"), and — the rule benchgate holds itself to — no status on a merge request's head
//! without that merge request's `pipeline_id` (GitLab would start an external pipeline beside
//! it that can hide a failed one: gitlab#443254). Rate limits on demand (429 with
//! `Retry-After` and `RateLimit-Reset`). External status checks as on Ultimate (401 on any
//! other project; an answer only for the merge request's head, else 409; a check left pending
//! past its timeout reads `failed`). It keeps every write, and every refusal it answered on its
//! own, so a test can assert benchgate never sent what GitLab refuses.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const TOKEN: &str = "glpat-e2e-test-token";
/// The user the token belongs to (a project bot).
pub const BOT: (u64, &str) = (9001, "project_42_bot_benchgate");

#[derive(Debug, Clone)]
pub struct Note {
    pub id: u64,
    pub author: u64,
    pub body: String,
}

#[derive(Debug, Clone)]
pub struct Status {
    pub sha: String,
    pub name: String,
    pub state: String,
    pub description: String,
    pub pipeline_id: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct MergeRequest {
    pub sha: String,
    pub base_sha: String,
    pub pipeline: Option<u64>,
}

/// An external status check a project has (Settings → Merge requests → Status checks).
#[derive(Debug, Clone)]
pub struct ExternalCheck {
    pub id: u64,
    pub name: String,
    pub external_url: String,
    /// A shared secret is set: GitLab signs its requests.
    pub hmac: bool,
}

/// A status check's answer as GitLab records it.
#[derive(Debug, Clone)]
pub struct CheckResponse {
    pub project: u64,
    pub iid: u64,
    pub check: u64,
    pub sha: String,
    pub status: String,
    pub at: Instant,
}

#[derive(Debug, Default)]
pub struct State {
    /// Project → its repository on disk: compare answers from its real history.
    pub repo_dirs: BTreeMap<u64, std::path::PathBuf>,
    /// Projects on Ultimate: the only ones with external status checks.
    pub ultimate: std::collections::BTreeSet<u64>,
    /// Project → its external status checks.
    pub status_checks: BTreeMap<u64, Vec<ExternalCheck>>,
    pub check_responses: Vec<CheckResponse>,
    /// How long a check may stay pending before it reads `failed` (GitLab: two minutes).
    pub status_check_timeout: Duration,
    /// (project, iid) → when its head was last set: a check with no answer is pending from then.
    pub head_since: BTreeMap<(u64, u64), Instant>,
    pub users: BTreeMap<u64, String>,
    /// (project, user) → access level.
    pub members: BTreeMap<(u64, u64), u32>,
    /// (project, iid) → merge request.
    pub mrs: BTreeMap<(u64, u64), MergeRequest>,
    /// (project, iid) → notes, oldest first.
    pub notes: BTreeMap<(u64, u64), Vec<Note>>,
    pub statuses: Vec<Status>,
    /// The token's scopes (`GET /personal_access_tokens/self`).
    pub scopes: Vec<String>,
    /// Project id → `group/name`.
    pub projects: BTreeMap<u64, String>,
    /// Project id → its hooks as GitLab lists them.
    pub hooks: BTreeMap<u64, Vec<Value>>,
    /// (project, sha) → path → contents.
    pub files: BTreeMap<(u64, String), BTreeMap<String, String>>,
    /// (project, iid) → (old_path, new_path) of each changed file.
    pub diffs: BTreeMap<(u64, u64), Vec<(String, String)>>,
    /// (project, sha) of commits the project has beside merge request heads (a status may go
    /// on any of its commits).
    pub commits: std::collections::BTreeSet<(u64, String)>,
    /// (a, b) → their merge base.
    pub merge_bases: BTreeMap<(String, String), String>,
    /// (note id, emoji name) awarded by the bot.
    pub awards: Vec<(u64, String)>,
    /// project → issues (iid, title, description, labels, state).
    pub issues: BTreeMap<u64, Vec<Value>>,
    /// Calls to answer 429 before serving again.
    pub rate_limited: u32,
    /// Every write it accepted, as "METHOD path".
    pub writes: Vec<String>,
    /// Every refusal it answered on its own: "status path: message".
    pub refusals: Vec<String>,
    next_id: u64,
}

/// The fake, on a real port.
pub struct FakeGitlab {
    pub server: MockServer,
    pub state: Arc<Mutex<State>>,
}

impl FakeGitlab {
    pub async fn start() -> Self {
        let mut state = State {
            next_id: 1000,
            ..State::default()
        };
        state.users.insert(BOT.0, BOT.1.to_owned());
        state.scopes = vec!["api".to_owned()];
        state.status_check_timeout = Duration::from_secs(120);
        let state = Arc::new(Mutex::new(state));
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(Rules {
                state: state.clone(),
            })
            .mount(&server)
            .await;
        FakeGitlab { server, state }
    }

    pub fn url(&self) -> String {
        self.server.uri()
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// A user who is a member of `project` at `level` (Guest 10 … Owner 50).
    pub fn member(&self, project: u64, user: (u64, &str), level: u32) {
        let mut s = self.state();
        s.users.insert(user.0, user.1.to_owned());
        s.members.insert((project, user.0), level);
    }

    pub fn merge_request(&self, project: u64, iid: u64, mr: MergeRequest) {
        let mut s = self.state();
        s.mrs.insert((project, iid), mr);
        s.head_since.insert((project, iid), Instant::now());
    }

    /// An external status check on `project`, which is then on Ultimate; returns its id.
    pub fn status_check(&self, project: u64, name: &str, external_url: &str) -> u64 {
        let mut s = self.state();
        s.next_id += 1;
        let id = s.next_id;
        s.ultimate.insert(project);
        s.status_checks
            .entry(project)
            .or_default()
            .push(ExternalCheck {
                id,
                name: name.to_owned(),
                external_url: external_url.to_owned(),
                hmac: true,
            });
        id
    }

    /// "Retry" pressed on a failed status check: pending again until its service answers
    /// (GitLab then sends the merge request to the check's URL).
    pub fn retry_status_check(&self, project: u64, iid: u64, check: u64) {
        let mut s = self.state();
        let sha = s.mrs[&(project, iid)].sha.clone();
        s.check_responses.push(CheckResponse {
            project,
            iid,
            check,
            sha,
            status: "pending".to_owned(),
            at: Instant::now(),
        });
    }

    /// What merge request `iid`'s page shows for status check `check` now.
    pub fn status_check_state(&self, project: u64, iid: u64, check: u64) -> String {
        self.state().check_state(project, iid, check)
    }

    /// A note by `author`, as if written in GitLab's UI.
    pub fn note_by(&self, project: u64, iid: u64, author: u64, body: &str) -> u64 {
        let mut s = self.state();
        s.next_id += 1;
        let id = s.next_id;
        s.notes.entry((project, iid)).or_default().push(Note {
            id,
            author,
            body: body.to_owned(),
        });
        id
    }
}

/// One page of `all` as GitLab pages lists: `per_page` 20 by default, at most 100.
fn page_of(all: &[Value], query: &BTreeMap<String, String>) -> ResponseTemplate {
    let per_page = query
        .get("per_page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(20)
        .clamp(1, 100);
    let page = query
        .get("page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let pages = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .cloned()
        .collect();
    let next = if page < pages {
        (page + 1).to_string()
    } else {
        String::new()
    };
    answer(200, Value::Array(items))
        .insert_header("X-Page", page.to_string().as_str())
        .insert_header("X-Per-Page", per_page.to_string().as_str())
        .insert_header("X-Total", all.len().to_string().as_str())
        .insert_header("X-Total-Pages", pages.to_string().as_str())
        .insert_header("X-Next-Page", next.as_str())
}

impl State {
    /// The latest answer for the merge request's head; `pending` without one, `failed` once
    /// pending longer than the timeout.
    fn check_state(&self, project: u64, iid: u64, check: u64) -> String {
        let Some(mr) = self.mrs.get(&(project, iid)) else {
            return "pending".to_owned();
        };
        let latest =
            self.check_responses.iter().rev().find(|r| {
                r.project == project && r.iid == iid && r.check == check && r.sha == mr.sha
            });
        let pending_since = match latest {
            Some(r) if r.status != "pending" => return r.status.clone(),
            Some(r) => r.at,
            None => self
                .head_since
                .get(&(project, iid))
                .copied()
                .unwrap_or_else(Instant::now),
        };
        if pending_since.elapsed() > self.status_check_timeout {
            "failed".to_owned()
        } else {
            "pending".to_owned()
        }
    }
}

struct Rules {
    state: Arc<Mutex<State>>,
}

fn answer(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(body)
}

impl Respond for Rules {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut s = self.state.lock().unwrap();
        let path = request.url.path().to_owned();
        let method = request.method.as_str().to_owned();
        let refuse = |s: &mut State, status: u16, body: Value| {
            s.refusals.push(format!("{status} {method} {path}: {body}"));
            answer(status, body)
        };
        let token = request
            .headers
            .get("private-token")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or_else(|| {
                request
                    .headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer ").map(str::to_owned))
            });
        if token.as_deref() != Some(TOKEN) {
            return refuse(&mut s, 401, json!({"message": "401 Unauthorized"}));
        }
        if s.rate_limited > 0 {
            s.rate_limited -= 1;
            let reset = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
                + 1;
            return ResponseTemplate::new(429)
                .insert_header("Retry-After", "1")
                .insert_header("RateLimit-Reset", reset.to_string().as_str())
                .set_body_string("Retry later");
        }
        let Some(rest) = path.strip_prefix("/api/v4/") else {
            return refuse(&mut s, 404, json!({"error": "404 Not Found"}));
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let query: BTreeMap<String, String> = request.url.query_pairs().into_owned().collect();
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u64>().ok());
        // `:id` is a project's number or its URL-encoded path, as GitLab takes both.
        let project = parts.get(1).and_then(|segment| {
            let path = segment.replace("%2F", "/").replace("%2f", "/");
            segment.parse::<u64>().ok().or_else(|| {
                s.projects
                    .iter()
                    .find(|(_, p)| **p == path)
                    .map(|(id, _)| *id)
            })
        });
        if parts.first() == Some(&"projects") && parts.len() > 2 && project.is_none() {
            return refuse(&mut s, 404, json!({"message": "404 Project Not Found"}));
        }
        match (method.as_str(), parts.as_slice()) {
            ("GET", ["user"]) => answer(200, json!({"id": BOT.0, "username": BOT.1})),
            ("GET", ["personal_access_tokens", "self"]) => answer(
                200,
                json!({"id": 1, "name": "benchgate", "scopes": s.scopes, "active": true,
                       "revoked": false, "expires_at": "2027-06-30", "user_id": BOT.0}),
            ),
            ("GET", ["projects", id]) => {
                let wanted = id.replace("%2F", "/").replace("%2f", "/");
                let found = s
                    .projects
                    .iter()
                    .find(|(pid, path)| pid.to_string() == wanted || **path == wanted)
                    .map(|(pid, path)| (*pid, path.clone()));
                match found {
                    Some((pid, path)) => answer(
                        200,
                        json!({"id": pid, "path_with_namespace": path, "default_branch": "main"}),
                    ),
                    None => refuse(&mut s, 404, json!({"message": "404 Project Not Found"})),
                }
            }
            ("GET", ["projects", _, "repository", "files", file, "raw"]) => {
                let project = project.unwrap_or(0);
                let path = file.replace("%2F", "/").replace("%2E", ".");
                let sha = query.get("ref").cloned().unwrap_or_default();
                match s.files.get(&(project, sha)).and_then(|f| f.get(&path)) {
                    Some(text) => ResponseTemplate::new(200).set_body_string(text.clone()),
                    None => answer(404, json!({"message": "404 File Not Found"})),
                }
            }
            ("GET", ["projects", _, "merge_requests", _, "diffs"]) => {
                let key = (project.unwrap_or(0), num(3).unwrap_or(0));
                let all: Vec<Value> = s
                    .diffs
                    .get(&key)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(old, new)| json!({"old_path": old, "new_path": new, "renamed_file": old != new, "diff": ""}))
                    .collect();
                page_of(&all, &query)
            }
            ("GET", ["projects", _, "repository", "merge_base"]) => {
                let refs: Vec<String> = request
                    .url
                    .query_pairs()
                    .filter(|(k, _)| k == "refs[]")
                    .map(|(_, v)| v.into_owned())
                    .collect();
                if refs.len() < 2 {
                    return refuse(&mut s, 400, json!({"message": "Provide at least 2 refs"}));
                }
                match s.merge_bases.get(&(refs[0].clone(), refs[1].clone())) {
                    Some(id) => answer(200, json!({"id": id})),
                    None => refuse(&mut s, 404, json!({"message": "404 Commit Not Found"})),
                }
            }
            (
                "POST",
                [
                    "projects",
                    _,
                    "merge_requests",
                    _,
                    "notes",
                    _,
                    "award_emoji",
                ],
            ) => {
                let key = (project.unwrap_or(0), num(3).unwrap_or(0));
                let note = num(5).unwrap_or(0);
                let name = body["name"].as_str().unwrap_or("").to_owned();
                if !s
                    .notes
                    .get(&key)
                    .is_some_and(|n| n.iter().any(|n| n.id == note))
                {
                    return refuse(&mut s, 404, json!({"message": "404 Note Not Found"}));
                }
                if s.awards.contains(&(note, name.clone())) {
                    return refuse(
                        &mut s,
                        404,
                        json!({"message": "404 Award Emoji Name has already been taken Not Found"}),
                    );
                }
                s.awards.push((note, name.clone()));
                s.writes.push(format!("POST {path}"));
                answer(
                    201,
                    json!({"id": s.awards.len(), "name": name, "user": {"id": BOT.0}}),
                )
            }
            ("GET", ["projects", _, "issues"]) => {
                let project = project.unwrap_or(0);
                let wanted: Vec<String> = query
                    .get("labels")
                    .map(|l| l.split(',').map(str::to_owned).collect())
                    .unwrap_or_default();
                let all: Vec<Value> = s
                    .issues
                    .get(&project)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|i| {
                        wanted.iter().all(|w| {
                            i["labels"]
                                .as_array()
                                .is_some_and(|l| l.iter().any(|x| x == w.as_str()))
                        })
                    })
                    .collect();
                page_of(&all, &query)
            }
            ("POST", ["projects", _, "issues"]) => {
                let project = project.unwrap_or(0);
                let Some(title) = body["title"].as_str().filter(|t| !t.is_empty()) else {
                    return refuse(&mut s, 400, json!({"error": "title is missing"}));
                };
                let issues = s.issues.entry(project).or_default();
                let iid = issues.len() as u64 + 1;
                let labels: Vec<&str> = body["labels"]
                    .as_str()
                    .unwrap_or("")
                    .split(',')
                    .filter(|l| !l.is_empty())
                    .collect();
                let issue = json!({"iid": iid, "title": title, "description": body["description"], "labels": labels, "state": "opened", "web_url": format!("https://gitlab.example/issues/{iid}")});
                issues.push(issue.clone());
                s.writes.push(format!("POST {path}"));
                answer(201, issue)
            }
            ("PUT", ["projects", _, "issues", _]) => {
                let (project, iid) = (project.unwrap_or(0), num(3).unwrap_or(0));
                let Some(issue) = s
                    .issues
                    .get_mut(&project)
                    .and_then(|i| i.iter_mut().find(|i| i["iid"] == iid))
                else {
                    return refuse(&mut s, 404, json!({"message": "404 Issue Not Found"}));
                };
                for key in ["title", "description"] {
                    if let Some(v) = body.get(key) {
                        issue[key] = v.clone();
                    }
                }
                match body["state_event"].as_str() {
                    Some("close") => issue["state"] = "closed".into(),
                    Some("reopen") => issue["state"] = "opened".into(),
                    _ => {}
                }
                let issue = issue.clone();
                s.writes.push(format!("PUT {path}"));
                answer(200, issue)
            }
            ("GET", ["projects", _, "hooks"]) => {
                let project = project.unwrap_or(0);
                if s.members.get(&(project, BOT.0)).copied().unwrap_or(0) < 40 {
                    return refuse(&mut s, 403, json!({"message": "403 Forbidden"}));
                }
                answer(
                    200,
                    Value::Array(s.hooks.get(&project).cloned().unwrap_or_default()),
                )
            }
            ("GET", ["projects", _, "merge_requests", _]) => {
                let key = (project.unwrap_or(0), num(3).unwrap_or(0));
                match s.mrs.get(&key) {
                    Some(mr) => answer(
                        200,
                        json!({
                            "iid": key.1, "sha": mr.sha,
                            "diff_refs": {"base_sha": mr.base_sha, "head_sha": mr.sha, "start_sha": mr.base_sha},
                            "head_pipeline": mr.pipeline.map(|id| json!({"id": id, "sha": mr.sha})),
                        }),
                    ),
                    None => refuse(&mut s, 404, json!({"message": "404 Not found"})),
                }
            }
            ("GET", ["projects", _, "members", "all", _]) => {
                let (project, user) = (project.unwrap_or(0), num(4).unwrap_or(0));
                match s.members.get(&(project, user)) {
                    Some(level) => answer(
                        200,
                        json!({"id": user, "username": s.users[&user], "access_level": level}),
                    ),
                    None => answer(404, json!({"message": "404 Not found"})),
                }
            }
            ("GET", ["projects", _, "merge_requests", _, "notes"]) => {
                let key = (project.unwrap_or(0), num(3).unwrap_or(0));
                let all: Vec<Value> = s
                    .notes
                    .get(&key)
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|n| {
                        json!({"id": n.id, "body": n.body, "system": false,
                               "author": {"id": n.author, "username": s.users.get(&n.author)}})
                    })
                    .collect();
                page_of(&all, &query)
            }
            ("POST", ["projects", _, "merge_requests", _, "notes"]) => {
                let key = (project.unwrap_or(0), num(3).unwrap_or(0));
                let text = body["body"].as_str().unwrap_or("").to_owned();
                if text.trim().is_empty() {
                    return refuse(
                        &mut s,
                        400,
                        json!({"message": "400 Bad request - body is missing"}),
                    );
                }
                if text.chars().count() > 1_000_000 {
                    return refuse(
                        &mut s,
                        400,
                        json!({"message": "Note {:note=>[\"is too long (maximum is 1000000 characters)\"]}"}),
                    );
                }
                s.next_id += 1;
                let id = s.next_id;
                s.notes.entry(key).or_default().push(Note {
                    id,
                    author: BOT.0,
                    body: text.clone(),
                });
                s.writes.push(format!("POST {path}"));
                answer(
                    201,
                    json!({"id": id, "body": text, "author": {"id": BOT.0, "username": BOT.1}}),
                )
            }
            ("PUT", ["projects", _, "merge_requests", _, "notes", _]) => {
                let key = (project.unwrap_or(0), num(3).unwrap_or(0));
                let id = num(5).unwrap_or(0);
                let text = body["body"].as_str().unwrap_or("").to_owned();
                let Some(note) = s
                    .notes
                    .get(&key)
                    .and_then(|n| n.iter().find(|n| n.id == id))
                    .cloned()
                else {
                    return refuse(&mut s, 404, json!({"message": "404 Not found"}));
                };
                if note.author != BOT.0 {
                    return refuse(&mut s, 403, json!({"message": "403 Forbidden"}));
                }
                let slot = s
                    .notes
                    .get_mut(&key)
                    .unwrap()
                    .iter_mut()
                    .find(|n| n.id == id)
                    .unwrap();
                slot.body = text.clone();
                s.writes.push(format!("PUT {path}"));
                answer(
                    200,
                    json!({"id": id, "body": text, "author": {"id": BOT.0, "username": BOT.1}}),
                )
            }
            ("POST", ["projects", _, "statuses", sha]) => {
                let project = project.unwrap_or(0);
                let sha = sha.to_string();
                let of_sha: Vec<MergeRequest> = s
                    .mrs
                    .iter()
                    .filter(|((p, _), mr)| *p == project && mr.sha == sha)
                    .map(|(_, mr)| mr.clone())
                    .collect();
                if of_sha.is_empty() && !s.commits.contains(&(project, sha.clone())) {
                    return refuse(
                        &mut s,
                        404,
                        json!({"message": "404 References for commit Not Found"}),
                    );
                }
                let state = body["state"].as_str().unwrap_or("").to_owned();
                let event = match state.as_str() {
                    "pending" => "enqueue",
                    "running" => "run",
                    "success" => "success",
                    "failed" => "drop",
                    "canceled" => "cancel",
                    _ => {
                        return refuse(
                            &mut s,
                            400,
                            json!({"error": "state does not have a valid value"}),
                        );
                    }
                };
                let description = body["description"].as_str().unwrap_or("").to_owned();
                if description.chars().count() > 255 {
                    return refuse(
                        &mut s,
                        400,
                        json!({"message": {"description": ["is too long (maximum is 255 characters)"]}}),
                    );
                }
                let pipeline_id = body["pipeline_id"].as_u64();
                let pipelines: Vec<u64> = of_sha.iter().filter_map(|mr| mr.pipeline).collect();
                match pipeline_id {
                    None if !pipelines.is_empty() => {
                        return refuse(
                            &mut s,
                            400,
                            json!({"message": "no pipeline_id: this would start an external pipeline beside the merge request's (gitlab#443254)"}),
                        );
                    }
                    Some(id) if !pipelines.contains(&id) => {
                        return refuse(&mut s, 404, json!({"message": "404 Pipeline Not Found"}));
                    }
                    _ => {}
                }
                let name = body["name"].as_str().unwrap_or("default").to_owned();
                let latest =
                    s.statuses.iter().rev().find(|st| {
                        st.sha == sha && st.name == name && st.pipeline_id == pipeline_id
                    });
                if let Some(latest) = latest
                    && latest.state == state
                {
                    let message = format!(
                        "Cannot transition status via :{event} from :{state} (Reason(s): Status cannot transition via \"{event}\")"
                    );
                    return refuse(&mut s, 400, json!({"message": message}));
                }
                s.statuses.push(Status {
                    sha: sha.clone(),
                    name: name.clone(),
                    state: state.clone(),
                    description: description.clone(),
                    pipeline_id,
                });
                s.writes.push(format!("POST {path}"));
                answer(
                    201,
                    json!({"sha": sha, "name": name, "status": state, "description": description, "pipeline_id": pipeline_id}),
                )
            }
            ("GET", ["projects", _, "repository", "compare"]) => {
                let project = project.unwrap_or(0);
                let (Some(from), Some(to)) = (query.get("from"), query.get("to")) else {
                    return refuse(
                        &mut s,
                        400,
                        json!({"error": "from is missing, to is missing"}),
                    );
                };
                let Some(dir) = s.repo_dirs.get(&project).cloned() else {
                    return refuse(&mut s, 404, json!({"message": "404 Ref Not Found"}));
                };
                match compare(&dir, from, to) {
                    Some(commits) => answer(
                        200,
                        json!({"commit": commits.last(), "commits": commits, "diffs": [],
                               "compare_timeout": false, "compare_same_ref": from == to}),
                    ),
                    None => refuse(&mut s, 404, json!({"message": "404 Ref Not Found"})),
                }
            }
            ("GET", ["projects", _, "external_status_checks"]) => {
                let project = project.unwrap_or(0);
                if !s.ultimate.contains(&project) {
                    return refuse(&mut s, 401, json!({"message": "401 Unauthorized"}));
                }
                let all: Vec<Value> = s
                    .status_checks
                    .get(&project)
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "name": c.name, "project_id": project,
                               "external_url": c.external_url, "hmac": c.hmac,
                               "protected_branches": []})
                    })
                    .collect();
                page_of(&all, &query)
            }
            ("GET", ["projects", _, "merge_requests", _, "status_checks"]) => {
                let (project, iid) = (project.unwrap_or(0), num(3).unwrap_or(0));
                if !s.ultimate.contains(&project) {
                    return refuse(&mut s, 401, json!({"message": "401 Unauthorized"}));
                }
                if !s.mrs.contains_key(&(project, iid)) {
                    return refuse(&mut s, 404, json!({"message": "404 Not found"}));
                }
                let all: Vec<Value> = s
                    .status_checks
                    .get(&project)
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "name": c.name, "external_url": c.external_url,
                               "status": s.check_state(project, iid, c.id)})
                    })
                    .collect();
                page_of(&all, &query)
            }
            ("POST", ["projects", _, "merge_requests", _, "status_check_responses"]) => {
                let (project, iid) = (project.unwrap_or(0), num(3).unwrap_or(0));
                if !s.ultimate.contains(&project) {
                    return refuse(&mut s, 401, json!({"message": "401 Unauthorized"}));
                }
                if s.members.get(&(project, BOT.0)).is_some_and(|l| *l < 30) {
                    return refuse(&mut s, 403, json!({"message": "403 Forbidden"}));
                }
                let (Some(sha), Some(check)) = (
                    body["sha"].as_str().map(str::to_owned),
                    body["external_status_check_id"].as_u64(),
                ) else {
                    return refuse(
                        &mut s,
                        400,
                        json!({"error": "sha is missing, external_status_check_id is missing"}),
                    );
                };
                let status = body["status"].as_str().unwrap_or("").to_owned();
                if !["passed", "failed", "pending"].contains(&status.as_str()) {
                    return refuse(
                        &mut s,
                        400,
                        json!({"error": "status does not have a valid value"}),
                    );
                }
                let Some(head) = s.mrs.get(&(project, iid)).map(|mr| mr.sha.clone()) else {
                    return refuse(&mut s, 404, json!({"message": "404 Not found"}));
                };
                let known = s
                    .status_checks
                    .get(&project)
                    .is_some_and(|c| c.iter().any(|c| c.id == check));
                if !known {
                    return refuse(&mut s, 404, json!({"message": "404 Not found"}));
                }
                if sha != head {
                    return refuse(
                        &mut s,
                        409,
                        json!({"message": "SHA does not match HEAD of source branch"}),
                    );
                }
                s.check_responses.push(CheckResponse {
                    project,
                    iid,
                    check,
                    sha: sha.clone(),
                    status: status.clone(),
                    at: Instant::now(),
                });
                s.writes.push(format!("POST {path}"));
                s.next_id += 1;
                answer(
                    201,
                    json!({"id": s.next_id, "merge_request": {"iid": iid},
                           "external_status_check": {"id": check}, "status": status}),
                )
            }
            _ => refuse(&mut s, 404, json!({"error": "404 Not Found"})),
        }
    }
}

/// The commits of `to` not in `from`, oldest first, as GitLab's compare lists them, read from
/// the real repository; `None` when git knows either ref not.
fn compare(dir: &std::path::Path, from: &str, to: &str) -> Option<Vec<Value>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "log",
            "--reverse",
            "--format=%H%x00%P%x00%B%x1e",
            &format!("{from}..{to}"),
            "--",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.split('\x1e')
            .map(|r| r.trim_start_matches('\n'))
            .filter(|r| !r.is_empty())
            .map(|record| {
                let mut parts = record.splitn(3, '\0');
                let id = parts.next().unwrap_or_default();
                let parents: Vec<&str> = parts
                    .next()
                    .unwrap_or_default()
                    .split_whitespace()
                    .collect();
                let message = parts.next().unwrap_or_default();
                json!({"id": id, "short_id": &id[..id.len().min(8)], "parent_ids": parents,
                       "title": message.lines().next().unwrap_or_default(), "message": message})
            })
            .collect(),
    )
}
