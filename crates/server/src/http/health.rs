//! Liveness and readiness probes.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// The process is up.
async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// The database answers and its schema is current; otherwise 503 with what is wrong.
/// How long `/readyz` waits for the database: a load balancer must hear "not ready" quickly
/// from a server whose database hangs, not a timeout.
pub const READINESS_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

async fn readyz(State(app): State<AppState>) -> (StatusCode, Json<Value>) {
    let r = match tokio::time::timeout(READINESS_BUDGET, app.store.readiness()).await {
        Ok(r) => r,
        Err(_) => {
            tracing::warn!(
                budget_ms = READINESS_BUDGET.as_millis() as u64,
                "database did not answer the readiness check in time"
            );
            benchgate_store::Readiness::default()
        }
    };
    let ready = r.reachable && r.migrations_current;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "status": if ready { "ready" } else { "not ready" },
        "database": app.store.backend(),
        "reachable": r.reachable,
        "migrations_current": r.migrations_current,
    });
    (status, Json(body))
}
