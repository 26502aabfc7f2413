//! What the fake GitHub accepts and refuses, call by call, following GitHub's REST docs:
//! authentication first, then injected faults, then the endpoint's own rules.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::{Request, Respond, ResponseTemplate};

use super::repository::{self, UNPAGED_COMMITS};
use super::{
    APP_ID, BOT_LOGIN, Calls, CheckRun, Comment, Fault, Issue, Mode, REPO, State, Status, TOKEN,
    TOKEN_LOGIN, fixture,
};

/// GitHub's limits: a comment body in characters, a check run's summary and text in bytes, a
/// commit status description in characters.
const COMMENT_CHARS: usize = 65_536;
const SUMMARY_BYTES: usize = 65_535;
const STATUS_DESCRIPTION_CHARS: usize = 140;
/// An issue title, in characters (GitHub answers 422 beyond it).
const ISSUE_TITLE_CHARS: usize = 256;
/// Issues and PRs share numbers on GitHub; the fake's issues start well above the tests' PRs.
const FIRST_ISSUE: u64 = 500;
const DEFAULT_PER_PAGE: usize = 30;
const MAX_PER_PAGE: usize = 100;

pub(super) struct Responder {
    pub(super) state: Arc<Mutex<State>>,
    /// The fake's own URL, for `Link` headers.
    pub(super) base: String,
}

/// Who is calling, once authenticated.
#[derive(Debug, Clone, PartialEq)]
enum Caller {
    /// The App itself, by its JWT (only `/app/...` calls).
    AppJwt,
    /// An installation token of the App.
    Installation,
    /// The single token of token mode.
    User,
}

impl Caller {
    fn login(&self) -> &'static str {
        match self {
            Caller::User => TOKEN_LOGIN,
            _ => BOT_LOGIN,
        }
    }
}

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut s = self.state.lock().unwrap();
        let path = request.url.path().to_owned();
        let method = request.method.as_str().to_owned();
        let call = format!("{method} {path}");
        s.requests.push(call.clone());
        let answer = match authenticate(&s, request) {
            Err(why) => Err((401, why)),
            Ok(caller) => self.route(&mut s, request, &method, &path, caller),
        };
        match answer {
            Ok(template) => template,
            Err((status, why)) => {
                s.refusals.push((status, call, why.clone()));
                refusal(status, &why)
            }
        }
    }
}

impl Responder {
    fn route(
        &self,
        s: &mut State,
        request: &Request,
        method: &str,
        path: &str,
        caller: Caller,
    ) -> Result<ResponseTemplate, (u16, String)> {
        if let Some(id) = path
            .strip_prefix("/app/installations/")
            .and_then(|r| r.strip_suffix("/access_tokens"))
        {
            return mint_token(s, id, method, &caller);
        }
        if caller == Caller::AppJwt {
            return Err((
                401,
                "a JWT authenticates only as the App, not for repositories".into(),
            ));
        }
        if path == "/user" {
            return match caller {
                Caller::User => {
                    let mut user = fixture("rest/get-authenticated-user.200.json");
                    user["login"] = json!(TOKEN_LOGIN);
                    Ok(ResponseTemplate::new(200).set_body_json(user))
                }
                _ => Err((403, "Resource not accessible by integration".into())),
            };
        }
        let prefix = format!("/repos/{REPO}");
        let Some(rest) = path.strip_prefix(&prefix) else {
            return Err((404, "Not Found".into()));
        };
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if let Some(fault) = injected(s, rest, method) {
            return Ok(fault);
        }
        let query = |name: &str| {
            request
                .url
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        match (method, rest) {
            ("GET", "/contents/.benchgate.toml") => {
                let git_ref = query("ref").unwrap_or_default();
                s.config_reads.push(git_ref.clone());
                let text = if s.configs_at.is_empty() {
                    s.config.clone()
                } else {
                    s.configs_at
                        .iter()
                        .find(|(r, _)| *r == git_ref)
                        .map(|(_, text)| text.clone())
                };
                match text {
                    Some(text) => Ok(ResponseTemplate::new(200).set_body_string(text)),
                    None => Err((404, "Not Found".into())),
                }
            }
            ("GET", r) if r.starts_with("/pulls/") && r.ends_with("/files") => {
                let pr = number(r, 2)?;
                let pull = s.pulls.iter().find(|(n, _, _)| *n == pr).cloned();
                let (Some(repo), Some((_, base, head))) = (s.repository.clone(), pull) else {
                    // A PR no test opened on a served repository changes nothing.
                    return Ok(ResponseTemplate::new(200).set_body_json(json!([])));
                };
                let mut all = repository::pull_files(&repo, &base, &head)
                    .ok_or((404, "Not Found".to_owned()))?;
                // "Responses include a maximum of 3000 files."
                all.truncate(repository::MAX_PULL_FILES);
                let (items, link) =
                    self.page(path_of(request), all, query("per_page"), query("page"))?;
                Ok(with_link(
                    ResponseTemplate::new(200).set_body_json(items),
                    link,
                ))
            }
            ("GET", r) if r.starts_with("/issues/") && r.ends_with("/comments") => {
                let pr = number(r, 2)?;
                let template = fixture("rest/list-issue-comments.one.200.json")[0].clone();
                let bot = fixture("rest/issue-comment.performed-via-github-app.json");
                let all: Vec<Value> = s
                    .comments
                    .iter()
                    .filter(|c| c.pr == pr)
                    .map(|c| comment_json(&template, &bot, c))
                    .collect();
                let (items, link) =
                    self.page(path_of(request), all, query("per_page"), query("page"))?;
                Ok(with_link(
                    ResponseTemplate::new(200).set_body_json(items),
                    link,
                ))
            }
            ("POST", r) if r.starts_with("/issues/comments/") && r.ends_with("/reactions") => {
                let id = number(r, 3)?;
                if !s.comments.iter().any(|c| c.id == id) {
                    return Err((404, "Not Found".into()));
                }
                let content = body["content"].as_str().unwrap_or_default().to_owned();
                let mut answer = fixture("rest/create-reaction.issue-comment.201.json");
                answer["content"] = json!(content);
                let who = caller.login().to_owned();
                let seen = s
                    .reactions
                    .iter()
                    .any(|(c, k, u)| *c == id && *k == content && *u == who);
                if seen {
                    return Ok(ResponseTemplate::new(200).set_body_json(answer));
                }
                s.reactions.push((id, content, who));
                Ok(ResponseTemplate::new(201).set_body_json(answer))
            }
            ("POST", r) if r.starts_with("/issues/") && r.ends_with("/comments") => {
                let pr = number(r, 2)?;
                let text = comment_body(&body)?;
                s.next_id += 1;
                let comment = Comment {
                    id: s.next_id,
                    pr,
                    body: text,
                    author: caller.login().to_owned(),
                    edits: 0,
                };
                s.comments.push(comment.clone());
                Ok(ResponseTemplate::new(201).set_body_json(written_comment(&comment)))
            }
            ("PATCH", r) if r.starts_with("/issues/comments/") => {
                let id = number(r, 3)?;
                let text = comment_body(&body)?;
                let Some(c) = s.comments.iter_mut().find(|c| c.id == id) else {
                    return Err((404, "Not Found".into()));
                };
                if c.author != caller.login() {
                    return Err((403, "Resource not accessible by integration".into()));
                }
                c.body = text;
                c.edits += 1;
                let comment = c.clone();
                Ok(ResponseTemplate::new(200).set_body_json(written_comment(&comment)))
            }
            ("GET", "/issues") => {
                // GitHub lists open issues unless asked otherwise, newest first.
                let state = query("state").unwrap_or_else(|| "open".into());
                if !["open", "closed", "all"].contains(&state.as_str()) {
                    return Err((422, format!("state {state:?} is not included in the list")));
                }
                let since = match query("since") {
                    None => None,
                    Some(t) => Some(
                        chrono::DateTime::parse_from_rfc3339(&t)
                            .map_err(|_| (422, format!("since {t:?} is not an ISO 8601 time")))?,
                    ),
                };
                let all: Vec<Value> = s
                    .issues
                    .iter()
                    .rev()
                    .filter(|i| state == "all" || i.state == state)
                    .filter(|i| since.is_none_or(|t| i.updated_at >= t))
                    .map(issue_json)
                    .collect();
                let (items, link) =
                    self.page(path_of(request), all, query("per_page"), query("page"))?;
                Ok(with_link(
                    ResponseTemplate::new(200).set_body_json(items),
                    link,
                ))
            }
            ("POST", "/issues") => {
                let issue = issue_written(FIRST_ISSUE + s.issues.len() as u64, &body, None)?;
                let issue = Issue {
                    author: caller.login().to_owned(),
                    ..issue
                };
                s.issues.push(issue.clone());
                Ok(ResponseTemplate::new(201).set_body_json(issue_json(&issue)))
            }
            ("PATCH", r) if r.starts_with("/issues/") => {
                let n = number(r, 2)?;
                let Some(i) = s.issues.iter().position(|i| i.number == n) else {
                    return Err((404, "Not Found".into()));
                };
                let issue = issue_written(n, &body, Some(&s.issues[i]))?;
                s.issues[i] = issue.clone();
                Ok(ResponseTemplate::new(200).set_body_json(issue_json(&issue)))
            }
            ("POST", "/check-runs") => {
                only_apps(&caller)?;
                let run = check_run_written(s.next_id + 1, &body, None)?;
                commit_writable(s, &run.head_sha)?;
                s.next_id += 1;
                s.checks.push(run.clone());
                Ok(ResponseTemplate::new(201)
                    .set_body_json(check_json("rest/create-check-run.completed.201.json", &run)))
            }
            ("PATCH", r) if r.starts_with("/check-runs/") => {
                only_apps(&caller)?;
                let id = number(r, 2)?;
                let Some(i) = s.checks.iter().position(|c| c.id == id) else {
                    return Err((404, "Not Found".into()));
                };
                let run = check_run_written(id, &body, Some(&s.checks[i]))?;
                s.checks[i] = run.clone();
                Ok(ResponseTemplate::new(200)
                    .set_body_json(check_json("rest/update-check-run.completed.200.json", &run)))
            }
            ("GET", r) if r.starts_with("/commits/") && r.ends_with("/check-runs") => {
                let sha = r.split('/').nth(2).unwrap_or_default();
                if let Some(repo) = &s.repository
                    && repository::resolve(repo, sha).is_none()
                {
                    return Err((422, format!("No commit found for SHA: {sha}")));
                }
                let name = query("check_name");
                let runs: Vec<Value> = s
                    .checks
                    .iter()
                    .filter(|c| c.head_sha == sha && name.as_deref().is_none_or(|n| n == c.name))
                    .map(listed_check_json)
                    .collect();
                let total = runs.len();
                let (items, link) =
                    self.page(path_of(request), runs, query("per_page"), query("page"))?;
                let wrapped = json!({"total_count": total, "check_runs": items});
                Ok(with_link(
                    ResponseTemplate::new(200).set_body_json(wrapped),
                    link,
                ))
            }
            ("POST", r) if r.starts_with("/statuses/") => {
                let sha = r.trim_start_matches("/statuses/").to_owned();
                commit_writable(s, &sha)?;
                let state = body["state"].as_str().unwrap_or_default().to_owned();
                if !["error", "failure", "pending", "success"].contains(&state.as_str()) {
                    return Err((422, format!("state {state:?} is not included in the list")));
                }
                let description = body["description"].as_str().unwrap_or_default().to_owned();
                if description.chars().count() > STATUS_DESCRIPTION_CHARS {
                    return Err((
                        422,
                        "description is too long (maximum is 140 characters)".into(),
                    ));
                }
                s.statuses.push(Status {
                    sha,
                    state,
                    description,
                    context: body["context"].as_str().unwrap_or("default").to_owned(),
                });
                Ok(ResponseTemplate::new(201)
                    .set_body_json(fixture("rest/create-commit-status.201.json")))
            }
            ("GET", r) if r.starts_with("/compare/") => {
                let Some(repo) = s.repository.clone() else {
                    return Err((404, "Not Found".into()));
                };
                let Some((base, head)) = r.trim_start_matches("/compare/").split_once("...") else {
                    return Err((404, "Not Found".into()));
                };
                let comparison = repository::compare(&repo, &self.base, REPO, base, head)
                    .map_err(|why| (404, why))?;
                let mut answer = comparison.head;
                let (per_page, page) = (query("per_page"), query("page"));
                if per_page.is_none() && page.is_none() {
                    // Unpaged, GitHub lists the newest 250 and no Link.
                    let all = comparison.commits;
                    let skip = all.len().saturating_sub(UNPAGED_COMMITS);
                    answer["commits"] = json!(all[skip..]);
                    return Ok(ResponseTemplate::new(200).set_body_json(answer));
                }
                let first = page.as_deref().is_none_or(|p| p.parse() == Ok(1_usize));
                let (items, link) =
                    self.page(path_of(request), comparison.commits, per_page, page)?;
                // Paged, the changed files come on page 1 only.
                if !first {
                    answer.as_object_mut().unwrap().remove("files");
                }
                answer["commits"] = json!(items);
                Ok(with_link(
                    ResponseTemplate::new(200).set_body_json(answer),
                    link,
                ))
            }
            ("GET", r) if r.starts_with("/collaborators/") && r.ends_with("/permission") => {
                let login = r.split('/').nth(2).unwrap_or_default();
                match s.permissions.iter().find(|(l, _)| l == login) {
                    Some((_, file)) => {
                        Ok(ResponseTemplate::new(200)
                            .set_body_json(fixture(&format!("rest/{file}"))))
                    }
                    None => Err((404, "Not Found".into())),
                }
            }
            _ => Err((404, "Not Found".into())),
        }
    }

    /// One page of `all`, and GitHub's `Link` header when there is more.
    fn page(
        &self,
        path: String,
        all: Vec<Value>,
        per_page: Option<String>,
        page: Option<String>,
    ) -> Result<(Vec<Value>, Option<String>), (u16, String)> {
        let per_page = match per_page {
            None => DEFAULT_PER_PAGE,
            Some(p) => p
                .parse::<usize>()
                .map_err(|_| (422, format!("per_page {p:?} is not a number")))?
                .clamp(1, MAX_PER_PAGE),
        };
        let page = page
            .map_or(Ok(1), |p| p.parse::<usize>())
            .unwrap_or(1)
            .max(1);
        let last = all.len().div_ceil(per_page).max(1);
        let items: Vec<Value> = all
            .into_iter()
            .skip((page - 1) * per_page)
            .take(per_page)
            .collect();
        let link = (page < last).then(|| {
            let url = |n: usize| format!("{}{path}?per_page={per_page}&page={n}", self.base);
            format!(
                "<{}>; rel=\"next\", <{}>; rel=\"last\"",
                url(page + 1),
                url(last)
            )
        });
        Ok((items, link))
    }
}

fn path_of(request: &Request) -> String {
    request.url.path().to_owned()
}

fn with_link(answer: ResponseTemplate, link: Option<String>) -> ResponseTemplate {
    match link {
        Some(link) => answer.insert_header("link", link.as_str()),
        None => answer,
    }
}

fn authenticate(s: &State, request: &Request) -> Result<Caller, String> {
    let header = request
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let credential = header
        .strip_prefix("Bearer ")
        .or_else(|| header.strip_prefix("token "))
        .ok_or("Requires authentication")?;
    match s.mode.unwrap_or(Mode::App) {
        Mode::Token if credential == TOKEN => Ok(Caller::User),
        Mode::Token => Err("Bad credentials".into()),
        Mode::App if s.tokens.iter().any(|(t, _)| t == credential) => Ok(Caller::Installation),
        Mode::App => verify_jwt(credential).map(|()| Caller::AppJwt),
    }
}

/// The App's JWT: RS256 by the App's key, `iss` the App id, expiring within 10 minutes.
fn verify_jwt(token: &str) -> Result<(), String> {
    use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode};
    let public = std::fs::read(super::fixture_path("test-only-app-key.pub.pem")).unwrap();
    let key = DecodingKey::from_rsa_pem(&public).unwrap();
    let claims = decode::<Value>(token, &key, &Validation::new(Algorithm::RS256))
        .map_err(|e| format!("A JSON web token could not be decoded ({e})"))?
        .claims;
    let iss = match &claims["iss"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if iss != APP_ID.to_string() {
        return Err(format!(
            "'Issuer' claim ('iss') must be the App id, got {iss}"
        ));
    }
    let now = chrono::Utc::now().timestamp();
    let exp = claims["exp"].as_i64().unwrap_or(0);
    if exp > now + 600 + 60 {
        return Err("'Expiration time' claim ('exp') is too far in the future".into());
    }
    Ok(())
}

fn mint_token(
    s: &mut State,
    installation: &str,
    method: &str,
    caller: &Caller,
) -> Result<ResponseTemplate, (u16, String)> {
    if method != "POST" || *caller != Caller::AppJwt {
        return Err((401, "A JSON web token could not be decoded".into()));
    }
    let id: u64 = installation
        .parse()
        .map_err(|_| (404, "Not Found".to_owned()))?;
    let token = format!("ghs_fake_{id}_{}", s.tokens.len() + 1);
    s.tokens.push((token.clone(), id));
    let mut answer = fixture("rest/create-installation-access-token.201.json");
    answer["token"] = json!(token);
    answer["expires_at"] = json!((chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339());
    Ok(ResponseTemplate::new(201).set_body_json(answer))
}

/// The next injected fault for this call, if one is due.
fn injected(s: &mut State, rest: &str, method: &str) -> Option<ResponseTemplate> {
    let calls = if rest.contains("/comments") {
        Calls::Comments
    } else if rest.starts_with("/contents/.benchgate.toml") {
        Calls::Config
    } else if rest.starts_with("/check-runs") && method != "GET" {
        Calls::CheckRuns
    } else {
        return None;
    };
    let i = s.faults.iter().position(|(c, _)| *c == calls)?;
    let (_, fault) = s.faults.remove(i);
    s.faults_answered.push(calls);
    Some(match fault {
        Fault::Status(status, retry_after) => {
            let mut answer =
                ResponseTemplate::new(status).set_body_json(json!({"message": "injected failure"}));
            if let Some(secs) = retry_after {
                answer = answer.insert_header("retry-after", secs.to_string().as_str());
            }
            answer
        }
        Fault::SecondaryRateLimit(secs) => {
            let body =
                std::fs::read(super::fixture_path("rest/secondary-rate-limit.403.json")).unwrap();
            ResponseTemplate::new(403)
                .set_body_raw(body, "application/json")
                .insert_header("retry-after", secs.to_string().as_str())
                .insert_header("x-ratelimit-remaining", "21")
        }
    })
}

/// GitHub writes a check run or status only on a commit it has: one of the served repository,
/// and one of those a test allows.
fn commit_writable(s: &State, sha: &str) -> Result<(), (u16, String)> {
    let known = s
        .repository
        .as_deref()
        .is_none_or(|repo| repository::has_commit(repo, sha));
    let allowed = s
        .check_shas
        .as_ref()
        .is_none_or(|shas| shas.iter().any(|a| a == sha));
    if known && allowed {
        Ok(())
    } else {
        Err((422, format!("No commit found for SHA: {sha}")))
    }
}

fn only_apps(caller: &Caller) -> Result<(), (u16, String)> {
    match caller {
        Caller::Installation => Ok(()),
        _ => Err((403, "You must authenticate via a GitHub App.".into())),
    }
}

/// The `n`th `/`-separated part of `rest` as a number (404 when it is not one).
fn number(rest: &str, n: usize) -> Result<u64, (u16, String)> {
    rest.split('/')
        .nth(n)
        .and_then(|p| p.parse().ok())
        .ok_or((404, "Not Found".to_owned()))
}

fn comment_body(body: &Value) -> Result<String, (u16, String)> {
    let text = body["body"]
        .as_str()
        .ok_or((422, "body is missing".to_owned()))?;
    if text.chars().count() > COMMENT_CHARS {
        return Err((422, "Body is too long (maximum is 65536 characters)".into()));
    }
    Ok(text.to_owned())
}

/// A comment as GitHub lists it: people's from the recorded comment, the App's from a recorded
/// App comment (`performed_via_github_app` names the App).
fn comment_json(person: &Value, bot: &Value, c: &Comment) -> Value {
    let mut v = if c.author == BOT_LOGIN {
        let mut v = bot.clone();
        v["performed_via_github_app"]["id"] = json!(APP_ID);
        v
    } else {
        person.clone()
    };
    v["id"] = json!(c.id);
    v["body"] = json!(c.body);
    v["user"]["login"] = json!(c.author);
    v
}

fn written_comment(c: &Comment) -> Value {
    let person = fixture("rest/create-issue-comment.on-pr.201.json");
    let bot = fixture("rest/issue-comment.performed-via-github-app.json");
    comment_json(&person, &bot, c)
}

/// An issue after a create (`old` = None) or an edit, or why GitHub refuses it.
fn issue_written(number: u64, body: &Value, old: Option<&Issue>) -> Result<Issue, (u16, String)> {
    let title = match (&body["title"], old) {
        (Value::String(t), _) => t.clone(),
        (Value::Null, Some(o)) => o.title.clone(),
        _ => return Err((422, "title wasn't supplied".into())),
    };
    if title.trim().is_empty() || title.chars().count() > ISSUE_TITLE_CHARS {
        return Err((
            422,
            format!("title must be 1 to {ISSUE_TITLE_CHARS} characters"),
        ));
    }
    let text = match (&body["body"], old) {
        (Value::Null, Some(o)) => o.body.clone(),
        (Value::Null, None) => String::new(),
        _ => comment_body(body)?,
    };
    let labels = match &body["labels"] {
        Value::Null => old.map(|o| o.labels.clone()).unwrap_or_default(),
        Value::Array(items) => items
            .iter()
            .map(|l| l.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or((422, "labels must be strings".to_owned()))?,
        _ => return Err((422, "labels must be an array".into())),
    };
    let state = match &body["state"] {
        Value::Null => old.map_or("open".to_owned(), |o| o.state.clone()),
        Value::String(st) if old.is_some() && (st == "open" || st == "closed") => st.clone(),
        other => return Err((422, format!("state {other} is not included in the list"))),
    };
    let state_reason = match &body["state_reason"] {
        Value::Null if state == "closed" => Some("completed".to_owned()),
        Value::Null => None,
        Value::String(r) if ["completed", "not_planned", "reopened"].contains(&r.as_str()) => {
            Some(r.clone())
        }
        other => {
            return Err((
                422,
                format!("state_reason {other} is not included in the list"),
            ));
        }
    };
    Ok(Issue {
        number,
        title,
        body: text,
        labels,
        state,
        state_reason,
        author: old.map_or_else(String::new, |o| o.author.clone()),
        edits: old.map_or(0, |o| o.edits + 1),
        updated_at: chrono::Utc::now(),
    })
}

/// An issue as GitHub answers it: the recorded issue (closed or open) with the fake's fields;
/// one the App opened names the App in `performed_via_github_app`.
fn issue_json(i: &Issue) -> Value {
    let mut v = if i.state == "closed" {
        fixture("rest/update-issue.closed.200.json")
    } else {
        fixture("rest/create-issue.201.json")
    };
    v["number"] = json!(i.number);
    v["title"] = json!(i.title);
    v["body"] = json!(i.body);
    v["state"] = json!(i.state);
    v["state_reason"] = json!(i.state_reason);
    v["labels"] = json!(
        i.labels
            .iter()
            .map(|l| json!({"name": l}))
            .collect::<Vec<_>>()
    );
    v["user"]["login"] = json!(i.author);
    if i.author == BOT_LOGIN {
        let bot = fixture("rest/issue-comment.performed-via-github-app.json");
        v["performed_via_github_app"] = bot["performed_via_github_app"].clone();
        v["performed_via_github_app"]["id"] = json!(APP_ID);
    }
    v
}

/// A check run after a create (`old` = None) or an update, or why GitHub refuses it.
fn check_run_written(
    id: u64,
    body: &Value,
    old: Option<&CheckRun>,
) -> Result<CheckRun, (u16, String)> {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let conclusion = text(&body["conclusion"]).or_else(|| old.and_then(|o| o.conclusion.clone()));
    // Giving a conclusion completes the run.
    let status = match (text(&body["status"]), text(&body["conclusion"])) {
        (_, Some(_)) => "completed".to_owned(),
        (Some(s), None) => s,
        (None, None) => old.map_or("queued".to_owned(), |o| o.status.clone()),
    };
    if !["queued", "in_progress", "completed"].contains(&status.as_str()) {
        return Err((
            422,
            format!("status {status:?} is not included in the list"),
        ));
    }
    if status == "completed" && conclusion.is_none() {
        return Err((
            422,
            "conclusion is required when status is completed".into(),
        ));
    }
    if let Some(o) = old
        && o.status == "completed"
        && status != "completed"
    {
        return Err((
            422,
            format!("a completed check run cannot move back to {status}"),
        ));
    }
    for field in ["summary", "text"] {
        let bytes = body["output"][field].as_str().map_or(0, str::len);
        if bytes > SUMMARY_BYTES {
            return Err((
                422,
                format!("output.{field} is too long ({bytes} bytes; maximum is 65535)"),
            ));
        }
    }
    let name = match old {
        Some(o) => o.name.clone(),
        None => text(&body["name"]).unwrap_or_default(),
    };
    let head_sha = match old {
        Some(o) => o.head_sha.clone(),
        None => {
            let sha = text(&body["head_sha"]).unwrap_or_default();
            if sha.len() != 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err((422, format!("head_sha {sha:?} is not a commit sha")));
            }
            if text(&body["name"]).is_none_or(|n| n.is_empty()) {
                return Err((422, "name is missing".into()));
            }
            sha
        }
    };
    Ok(CheckRun {
        id,
        name,
        head_sha,
        external_id: text(&body["external_id"]).or_else(|| old.and_then(|o| o.external_id.clone())),
        status,
        conclusion,
        title: text(&body["output"]["title"])
            .or_else(|| old.map(|o| o.title.clone()))
            .unwrap_or_default(),
        titles: {
            let mut titles = old.map(|o| o.titles.clone()).unwrap_or_default();
            titles.extend(text(&body["output"]["title"]));
            titles
        },
        summary: text(&body["output"]["summary"])
            .or_else(|| old.map(|o| o.summary.clone()))
            .unwrap_or_default(),
    })
}

fn check_json(fixture_path: &str, run: &CheckRun) -> Value {
    let mut c = fixture(fixture_path);
    c["id"] = json!(run.id);
    c["name"] = json!(run.name);
    c["head_sha"] = json!(run.head_sha);
    c["status"] = json!(run.status);
    c["conclusion"] = json!(run.conclusion);
    c["external_id"] = json!(run.external_id);
    c["app"]["id"] = json!(APP_ID);
    c
}

fn listed_check_json(run: &CheckRun) -> Value {
    check_json("rest/create-check-run.completed.201.json", run)
}

/// GitHub's error body: its message and the documentation link it always adds.
fn refusal(status: u16, message: &str) -> ResponseTemplate {
    let base = match status {
        404 => fixture("rest/not-found.404.json"),
        422 => fixture("rest/validation-failed.422.json"),
        403 => fixture("rest/resource-not-accessible-by-integration.403.json"),
        _ => json!({"documentation_url": "https://docs.github.com/rest"}),
    };
    let mut body = base;
    body["message"] = json!(message);
    ResponseTemplate::new(status).set_body_json(body)
}
