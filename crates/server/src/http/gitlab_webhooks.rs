//! `POST /webhooks/gitlab`: check `X-Gitlab-Token` (constant time) before reading the body,
//! parse, de-duplicate on `X-Gitlab-Event-UUID`, and record the delivery with what it asks for
//! in one transaction, as `/webhooks/github` does. Answers without calling GitLab; the outbox
//! does the rest through the forge seam.

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use benchgate_gitlab::events::{
    DeliveryError, EVENT_HEADER, GitlabEvent, Headers, INSTANCE_HEADER, MergeRequestAction,
    MergeRequestEvent, MrNoteEvent, ProjectRef, PushEvent, UUID_HEADER, parse_delivery,
};
use benchgate_gitlab::token::TOKEN_HEADER;
use benchgate_store::Store;
use benchgate_store::model::{Delivery, DeliveryEffect, DeliveryRecord, Forge, NewRepository};
use serde_json::json;
use sha2::Digest;

use super::webhooks::header;
use crate::delivery_plan::CommandNote;
use crate::tasks::{CancelPullRequest, OutboxTask, RepoName, ScheduleMain, SchedulePullRequest};
use crate::{ApiError, AppState};

/// The longest description kept for its claims (GitLab allows 1,048,576 characters; a
/// description past GitHub's cap says nothing a claim needs).
const MAX_DESCRIPTION_CHARS: usize = 65_536;

pub fn routes() -> Router<AppState> {
    Router::new().route("/webhooks/gitlab", post(receive))
}

async fn receive(State(app): State<AppState>, request: Request) -> Response {
    let started = std::time::Instant::now();
    let (parts, body) = request.into_parts();
    // The token is checked before a byte of the body is read: a stranger costs nothing.
    let Some(tokens) = app.config.gitlab.hook_tokens() else {
        tracing::warn!("GitLab delivery refused: no GitLab hook token is configured");
        app.metrics.webhook("unauthorized", None);
        return ApiError::Unauthorized.into_response();
    };
    if let Err(e) = tokens.verify(header(&parts.headers, TOKEN_HEADER)) {
        tracing::warn!(reason = %e, "GitLab delivery refused");
        app.metrics.webhook("unauthorized", None);
        return ApiError::Unauthorized.into_response();
    }
    let body = match app.webhook_intake.receive(&parts.headers, body).await {
        Ok(body) => body,
        Err(refusal) => {
            app.metrics.webhook(refusal.outcome(), None);
            return refusal.into_response();
        }
    };
    let answer = handle(&app, &tokens, &parts.headers, &body.bytes).await;
    super::webhooks::counted(&app, started, answer)
}

async fn handle(
    app: &AppState,
    tokens: &benchgate_gitlab::token::HookTokens,
    headers: &HeaderMap,
    body: &[u8],
) -> super::webhooks::Answer {
    let sent = Headers {
        event: header(headers, EVENT_HEADER),
        token: header(headers, TOKEN_HEADER),
        uuid: header(headers, UUID_HEADER),
        instance: header(headers, INSTANCE_HEADER),
    };
    let delivery = parse_delivery(tokens, sent, body).map_err(|e| match e {
        DeliveryError::Token(_) => ApiError::Unauthorized,
        other => ApiError::BadRequest(other.to_string()),
    })?;
    // GitLab before 14 sent no UUID: the body's digest keys a redelivery then.
    let delivery_id = match &delivery.uuid {
        Some(uuid) => format!("gitlab:{uuid}"),
        None => format!("gitlab:sha256:{}", hex_of(&sha2::Sha256::digest(body))),
    };
    let event_name = sent.event.unwrap_or_default().to_owned();
    let host = app.config.gitlab.host();
    let recorded = tokio::time::timeout(super::webhooks::DATABASE_BUDGET, async {
        let plan = plan(app.store.as_ref(), host.as_deref(), &delivery.event).await?;
        let record = Delivery {
            delivery_id: delivery_id.clone(),
            event: event_name.clone(),
            action: plan.action.map(str::to_owned),
            outcome: plan.outcome.to_owned(),
        };
        let recorded = app.store.record_delivery(&record, &plan.effects).await?;
        Ok::<_, ApiError>((plan.outcome, recorded))
    })
    .await
    .map_err(|_| {
        tracing::error!(delivery = %delivery_id, event = %event_name, "database did not answer in time; 503 so GitLab redelivers");
        ApiError::Unavailable(format!(
            "the database did not answer within {} s; nothing was recorded, redeliver later",
            super::webhooks::DATABASE_BUDGET.as_secs()
        ))
    })?;
    let (outcome, record) = recorded?;
    Ok(match record {
        DeliveryRecord::Duplicate => {
            tracing::info!(delivery = %delivery_id, event = %event_name, "redelivery; nothing done again");
            (
                (StatusCode::OK, Json(json!({ "status": "duplicate" }))),
                "duplicate",
            )
        }
        DeliveryRecord::Recorded { outbox, .. } => {
            tracing::info!(delivery = %delivery_id, event = %event_name, outcome, outbox = outbox.len(), "GitLab webhook recorded");
            let answer = json!({ "status": "accepted", "outcome": outcome });
            ((StatusCode::ACCEPTED, Json(answer)), outcome)
        }
    })
}

/// What a GitLab delivery asks for.
struct Plan {
    outcome: &'static str,
    action: Option<&'static str>,
    effects: Vec<DeliveryEffect>,
}

impl Plan {
    fn new(outcome: &'static str, action: Option<&'static str>) -> Self {
        Plan {
            outcome,
            action,
            effects: Vec::new(),
        }
    }
}

/// Decides what an event asks for; reads the store only to find a repository to cancel in.
async fn plan(
    store: &dyn Store,
    host: Option<&str>,
    event: &GitlabEvent,
) -> Result<Plan, ApiError> {
    let e = match event {
        GitlabEvent::MergeRequest(e) => e,
        GitlabEvent::MrNote(note) => return Ok(command(host, note)),
        GitlabEvent::Push(push) => return Ok(push_plan(host, push)),
        GitlabEvent::Ignored(i) => {
            tracing::debug!(why = %i.why, "GitLab event ignored");
            return Ok(Plan::new("ignored", None));
        }
        GitlabEvent::Pipeline(_) => return Ok(Plan::new("ignored", None)),
    };
    let action = Some(action_word(e.action));
    let repo = match on_instance(host, &e.project) {
        Ok(repo) => repo,
        Err(outcome) => return Ok(Plan::new(outcome, action)),
    };
    let full_name = repo.full_name.clone();
    match e.action {
        MergeRequestAction::Close | MergeRequestAction::Merge => {
            let Some(row) = store.repository_by_name(&full_name).await? else {
                return Ok(Plan::new("ignored", action));
            };
            let mut plan = Plan::new("cancelled", action);
            plan.effects.push(DeliveryEffect::CancelPullRequest {
                repository_id: row.id,
                pr_number: e.iid as i64,
            });
            plan.effects.push(DeliveryEffect::Outbox(
                CancelPullRequest { repo, pr: e.iid }.message(),
            ));
            Ok(plan)
        }
        // An edit of the title, labels or description pushed nothing to measure.
        MergeRequestAction::Update if !e.new_commits() => Ok(Plan::new("ignored", action)),
        MergeRequestAction::Open | MergeRequestAction::Reopen | MergeRequestAction::Update => {
            Ok(schedule(e, repo, action))
        }
    }
}

/// A note on a merge request: a command, as on a GitHub pull request. GitLab has no author
/// association: every commenter's access level is asked.
fn command(host: Option<&str>, note: &MrNoteEvent) -> Plan {
    let repo = match on_instance(host, &note.project) {
        Ok(repo) => repo,
        Err(outcome) => return Plan::new(outcome, None),
    };
    // benchgate's own notes (reports, replies) open with its marker; they are never commands.
    if note.body.trim_start().starts_with("<!-- benchgate:") {
        return Plan::new("ignored", None);
    }
    let (outcome, task) = crate::delivery_plan::command_on_change(CommandNote {
        repo,
        pr: note.mr_iid,
        comment_id: note.note_id,
        commenter: &note.author.username,
        commenter_id: Some(note.author.id),
        association: "NONE",
        body: &note.body,
        commented_at: note.created_at.as_deref().and_then(gitlab_time),
    });
    let mut plan = Plan::new(outcome, None);
    plan.effects.extend(task.map(DeliveryEffect::Outbox));
    plan
}

/// The project as benchgate names it, when it lives on the configured instance: one instance
/// per server, since a hook from another host would be answered through the wrong API.
pub(super) fn on_instance(
    host: Option<&str>,
    project: &ProjectRef,
) -> Result<RepoName, &'static str> {
    let Some(full_name) = project.full_name() else {
        tracing::warn!(web_url = %project.web_url, "GitLab project whose web_url names no host; ignored");
        return Err("ignored");
    };
    if host != project.host() {
        tracing::warn!(project = %full_name, configured = ?host, "GitLab delivery from another instance; ignored");
        return Err("other_instance");
    }
    Ok(RepoName {
        full_name,
        installation_id: None,
        forge: Forge::GitLab,
    })
}

/// The repository's row, as a delivery records it.
fn repository_row(repo: &RepoName, project: &ProjectRef) -> DeliveryEffect {
    DeliveryEffect::UpsertRepository(NewRepository {
        github_id: None,
        installation_id: None,
        full_name: repo.full_name.clone(),
        clone_url: project.clone_url.clone(),
        forge: Forge::GitLab,
    })
}

/// A push to the default branch is compared with the commit before it, as on GitHub; other
/// branches are merge requests' business, and a new branch has nothing before it.
fn push_plan(host: Option<&str>, push: &PushEvent) -> Plan {
    if !push.is_default_branch() {
        return Plan::new("ignored", None);
    }
    let Some(before) = &push.before else {
        return Plan::new("ignored", None);
    };
    let repo = match on_instance(host, &push.project) {
        Ok(repo) => repo,
        Err(outcome) => return Plan::new(outcome, None),
    };
    let mut plan = Plan::new("main_scheduled", None);
    plan.effects.push(repository_row(&repo, &push.project));
    let task = ScheduleMain {
        repo,
        branch: push.branch.clone(),
        before: before.clone(),
        after: push.after.clone(),
        // GitLab lists at most 20 of a push's commits; a step of more than one is searched
        // over the whole range, which the search reads from GitLab's compare.
        commits: push.commits.clone(),
        forced: false,
        head_message: String::new(),
    };
    plan.effects.push(DeliveryEffect::Outbox(task.message()));
    plan
}

/// GitLab's note times: `2023-05-25 19:04:19 UTC` in hooks, RFC 3339 on some hosts.
fn gitlab_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&chrono::Utc));
    }
    let naive = text.strip_suffix(" UTC")?;
    chrono::NaiveDateTime::parse_from_str(naive, "%Y-%m-%d %H:%M:%S")
        .ok()
        .map(|t| t.and_utc())
}

/// The repository's row, the merge request's newest head and, unless it is a draft, its
/// schedule.
fn schedule(e: &MergeRequestEvent, repo: RepoName, action: Option<&'static str>) -> Plan {
    let mut plan = Plan::new(
        if e.draft {
            "draft_skipped"
        } else {
            "scheduled"
        },
        action,
    );
    plan.effects
        .push(DeliveryEffect::UpsertRepository(NewRepository {
            github_id: None,
            installation_id: None,
            full_name: repo.full_name.clone(),
            clone_url: e.project.clone_url.clone(),
            forge: Forge::GitLab,
        }));
    plan.effects.push(DeliveryEffect::RecordPullRequestHead {
        full_name: repo.full_name.clone(),
        pr_number: e.iid as i64,
        head_sha: e.head_sha.clone(),
    });
    if e.draft {
        return plan;
    }
    let task = SchedulePullRequest {
        repo,
        clone_url: e.project.clone_url.clone(),
        pr: e.iid,
        base_ref: e.target_branch.clone(),
        // The hook does not say the target's tip; the merge request's merge base is read
        // from GitLab when the schedule runs.
        base_sha: String::new(),
        head_sha: e.head_sha.clone(),
        fork: e.from_fork(),
        body: e.description.chars().take(MAX_DESCRIPTION_CHARS).collect(),
    };
    plan.effects.push(DeliveryEffect::Outbox(task.message()));
    plan
}

fn action_word(a: MergeRequestAction) -> &'static str {
    match a {
        MergeRequestAction::Open => "open",
        MergeRequestAction::Reopen => "reopen",
        MergeRequestAction::Update => "update",
        MergeRequestAction::Merge => "merge",
        MergeRequestAction::Close => "close",
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
