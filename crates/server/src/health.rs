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
async fn readyz(State(app): State<AppState>) -> (StatusCode, Json<Value>) {
    let r = app.store.readiness().await;
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
