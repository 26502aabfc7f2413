//! `/metrics` for Prometheus.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::{ApiError, AppState};

/// The content type of the OpenMetrics text format, which Prometheus asks for first and every
/// scraper that reads the Prometheus text format also reads.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `/metrics` route. Public even when the dashboard token is set: it carries counts only,
/// and scrapers are usually configured per network rather than per token.
pub fn routes() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

/// The metrics page as Prometheus scrapes it.
async fn metrics(State(app): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let text = app.metrics.render(app.store.as_ref()).await?;
    Ok(([(header::CONTENT_TYPE, CONTENT_TYPE)], text))
}
