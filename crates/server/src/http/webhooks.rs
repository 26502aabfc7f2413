//! `POST /webhooks/github`: verify the signature on the raw bytes, parse, de-duplicate on
//! `X-GitHub-Delivery`, and record the delivery with everything it asks for in one
//! transaction. Answers `202` without calling GitHub; the outbox worker does the rest.

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use benchgate_github::events::EVENT_HEADER;
use benchgate_github::signature::SIGNATURE_HEADER;
use benchgate_github::{WebhookEvent, parse_event};
use benchgate_store::model::{Delivery, DeliveryRecord};
use serde_json::{Value, json};

use crate::{ApiError, AppState, delivery_plan};

/// The header carrying the delivery's GUID.
pub const DELIVERY_HEADER: &str = "X-GitHub-Delivery";

/// The webhook route. Its body is read by [`super::webhook_body::WebhookIntake`], within the
/// limits strangers share.
pub fn routes() -> Router<AppState> {
    Router::new().route("/webhooks/github", post(receive))
}

/// How long a delivery may wait for the database before it gets a 503: well inside GitHub's
/// 10 s delivery timeout, so GitHub sees a failure it can redeliver instead of a hang.
pub const DATABASE_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// Answers a delivery, counting it by outcome and timing it for `/metrics`.
async fn receive(State(app): State<AppState>, request: Request) -> Response {
    let started = std::time::Instant::now();
    let (parts, body) = request.into_parts();
    let body = match app.webhook_intake.receive(&parts.headers, body).await {
        Ok(body) => body,
        Err(refusal) => {
            app.metrics.webhook(refusal.outcome(), None);
            return refusal.into_response();
        }
    };
    let answer = handle(&app, &parts.headers, &body.bytes).await;
    counted(&app, started, answer)
}

/// A delivery's answer, and what the server made of it.
pub(super) type Answer = Result<((StatusCode, Json<Value>), &'static str), ApiError>;

/// The answer to a delivery of either forge, counted by outcome and timed for `/metrics`.
pub(super) fn counted(app: &AppState, started: std::time::Instant, answer: Answer) -> Response {
    let outcome = match &answer {
        Ok((_, outcome)) => *outcome,
        Err(ApiError::Unauthorized) => "unauthorized",
        Err(ApiError::BadRequest(_)) => "bad_request",
        Err(ApiError::Unavailable(_)) => "unavailable",
        Err(_) => "error",
    };
    app.metrics.webhook(outcome, Some(started.elapsed()));
    answer.map(|(response, _)| response).into_response()
}

/// The answer to a delivery and what the server made of it.
async fn handle(
    app: &AppState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<((StatusCode, Json<Value>), &'static str), ApiError> {
    verify(app, headers, body).await?;
    let delivery_id = header(headers, DELIVERY_HEADER)
        .ok_or_else(|| ApiError::BadRequest(format!("missing {DELIVERY_HEADER} header")))?;
    let event_name = header(headers, EVENT_HEADER)
        .ok_or_else(|| ApiError::BadRequest(format!("missing {EVENT_HEADER} header")))?;
    let event = parse_event(event_name, body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let recorded = tokio::time::timeout(DATABASE_BUDGET, async {
        let plan = delivery_plan::plan(app.store.as_ref(), &event).await?;
        let delivery = Delivery {
            delivery_id: delivery_id.to_owned(),
            event: event_name.to_owned(),
            action: action_of(&event, body),
            outcome: plan.outcome.to_owned(),
        };
        let record = app.store.record_delivery(&delivery, &plan.effects).await?;
        Ok::<_, ApiError>((plan, record))
    })
    .await
    .map_err(|_| {
        tracing::error!(
            delivery = delivery_id,
            event = event_name,
            "database did not answer in time; 503 so GitHub redelivers"
        );
        ApiError::Unavailable(format!(
            "the database did not answer within {} s; nothing was recorded, redeliver later",
            DATABASE_BUDGET.as_secs()
        ))
    })?;
    let (plan, record) = recorded?;
    match record {
        DeliveryRecord::Duplicate => {
            tracing::info!(
                delivery = delivery_id,
                event = event_name,
                "redelivery; nothing done again"
            );
            let answer = (StatusCode::OK, Json(json!({ "status": "duplicate" })));
            Ok((answer, "duplicate"))
        }
        DeliveryRecord::Recorded {
            jobs,
            cancelled_jobs,
            outbox,
            ..
        } => {
            tracing::info!(
                delivery = delivery_id,
                event = event_name,
                outcome = plan.outcome,
                jobs = jobs.len(),
                cancelled_jobs,
                outbox = outbox.len(),
                "webhook recorded"
            );
            let answer = (
                StatusCode::ACCEPTED,
                Json(json!({ "status": "accepted", "outcome": plan.outcome })),
            );
            Ok((answer, plan.outcome))
        }
    }
}

/// 401 unless a secret in force (flags, else stored by `/github/setup`) signed these exact bytes.
async fn verify(app: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<(), ApiError> {
    use crate::github_credentials::WebhookRefusal;
    let signature = header(headers, SIGNATURE_HEADER);
    match app.github_credentials.verify_webhook(signature, body).await {
        Ok(()) => Ok(()),
        Err(WebhookRefusal::NoSecret) => {
            tracing::warn!("webhook refused: no webhook secret is configured");
            Err(ApiError::Unauthorized)
        }
        Err(WebhookRefusal::BadSignature(e)) => {
            tracing::warn!(reason = %e, "webhook refused: bad signature");
            Err(ApiError::Unauthorized)
        }
        Err(WebhookRefusal::Store(e)) => Err(e.into()),
    }
}

pub(super) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)?
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The payload's `action`, for the delivery record: from the event when parsing read it, else
/// from the body (`ping` and ignored events, which parsing does not read).
fn action_of(event: &WebhookEvent, body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Action {
        action: Option<String>,
    }
    if let Some(action) = event.action() {
        return Some(action.to_owned());
    }
    serde_json::from_slice::<Action>(body).ok()?.action
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the delivery record kept before the body was parsed once: the body's `action`.
    fn sent_action(body: &[u8]) -> Option<String> {
        let v: Value = serde_json::from_slice(body).ok()?;
        v["action"].as_str().map(str::to_owned)
    }

    #[test]
    fn the_recorded_action_is_the_one_github_sent() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../github/tests/fixtures/webhooks"
        );
        let mut files = 0;
        for dir in [dir.to_owned(), format!("{dir}/real")] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let event_name = name.split('.').next().unwrap();
                let body = std::fs::read(&path).unwrap();
                let event = parse_event(event_name, &body).unwrap();
                assert_eq!(action_of(&event, &body), sent_action(&body), "{name}");
                files += 1;
            }
        }
        assert!(files > 20, "fixtures found: {files}");
        // Events benchgate does not parse keep their action too, and a body that is not JSON none.
        for (event_name, body) in [
            ("star", &br#"{"action": "created"}"#[..]),
            ("workflow_run", b"whatever"),
            ("create", br#"{"ref": "main", "ref_type": "branch"}"#),
        ] {
            let event = parse_event(event_name, body).unwrap();
            assert_eq!(action_of(&event, body), sent_action(body), "{event_name}");
        }
    }
}
