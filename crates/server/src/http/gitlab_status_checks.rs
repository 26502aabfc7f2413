//! `POST /webhooks/gitlab/status-check`: the URL of a GitLab external status check (Ultimate).
//! GitLab posts the merge request there on every change, and again when someone presses
//! "Retry" on a check that failed; the request is signed (`X-Gitlab-Signature`, HMAC-SHA256
//! under the check's shared secret, which must be the hook's secret token). Measuring starts
//! from the merge request hook, never from here: a decided gate for the head is answered
//! again (its check rewritten, which answers the status check); an undecided one is answered
//! when its benchmark ends.

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use benchgate_gitlab::events::parse_status_check;
use benchgate_gitlab::token::SIGNATURE_HEADER;
use benchgate_store::model::ComparisonState;
use serde_json::json;

use super::webhooks::{Answer, DATABASE_BUDGET, counted, header};
use crate::tasks::{OutboxTask, ReportCheck};
use crate::{ApiError, AppState};

pub fn routes() -> Router<AppState> {
    Router::new().route("/webhooks/gitlab/status-check", post(receive))
}

async fn receive(State(app): State<AppState>, request: Request) -> Response {
    let started = std::time::Instant::now();
    let (parts, body) = request.into_parts();
    let Some(secrets) = app.config.gitlab.signing_secrets() else {
        tracing::warn!("GitLab status check refused: no GitLab hook token is configured");
        app.metrics.webhook("unauthorized", None);
        return ApiError::Unauthorized.into_response();
    };
    let body = match app.webhook_intake.receive(&parts.headers, body).await {
        Ok(body) => body,
        Err(refusal) => {
            app.metrics.webhook(refusal.outcome(), None);
            return refusal.into_response();
        }
    };
    if let Err(e) = secrets.verify(header(&parts.headers, SIGNATURE_HEADER), &body.bytes) {
        tracing::warn!(reason = %e, "GitLab status check refused");
        app.metrics.webhook("unauthorized", None);
        return ApiError::Unauthorized.into_response();
    }
    let answer = handle(&app, &body.bytes).await;
    counted(&app, started, answer)
}

async fn handle(app: &AppState, body: &[u8]) -> Answer {
    let mr = parse_status_check(body)
        .map_err(|e| ApiError::BadRequest(format!("not a status check request: {e}")))?;
    let host = app.config.gitlab.host();
    let repo = match super::gitlab_webhooks::on_instance(host.as_deref(), &mr.project) {
        Ok(repo) => repo,
        Err(outcome) => return Ok(accepted(outcome)),
    };
    let queued = tokio::time::timeout(DATABASE_BUDGET, async {
        let Some(row) = app.store.repository_by_name(&repo.full_name).await? else {
            return Ok::<_, ApiError>(0);
        };
        let mut queued = 0;
        for c in app.store.head_comparisons(row.id, &mr.head_sha).await? {
            let decided = matches!(c.state, ComparisonState::Done | ComparisonState::Failed);
            if decided && c.pr_number == Some(mr.iid as i64) {
                let task = ReportCheck {
                    comparison_id: c.id.0,
                };
                app.store.enqueue_outbox(&task.message()).await?;
                queued += 1;
            }
        }
        Ok(queued)
    })
    .await
    .map_err(|_| {
        ApiError::Unavailable(format!(
            "the database did not answer within {} s; ask again (Retry on the check)",
            DATABASE_BUDGET.as_secs()
        ))
    })??;
    let outcome = if queued > 0 { "answered" } else { "waiting" };
    let check = mr.check.as_ref().map(|(id, name)| format!("{name} ({id})"));
    tracing::info!(project = %repo.full_name, mr = mr.iid, head = %mr.head_sha, check = ?check, outcome, "GitLab status check asked");
    Ok(accepted(outcome))
}

/// `answered`: the decided gate is written again; `waiting`: it is answered when decided.
fn accepted(outcome: &'static str) -> ((StatusCode, Json<serde_json::Value>), &'static str) {
    let body = json!({ "status": "accepted", "outcome": outcome });
    ((StatusCode::ACCEPTED, Json(body)), outcome)
}
