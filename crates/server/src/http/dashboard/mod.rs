//! The dashboard: server-rendered pages (askama, auto-escaped), SVG plots drawn on the server,
//! the same data as JSON under `/api/v1`, and a CSV export of a comparison's samples.
//!
//! Every page reads what the store keeps (floors and results are stored when computed); only a
//! comparison page touches samples, and only that comparison's.

mod acceptances_page;
mod access;
mod api;
mod comparison_list;
mod comparison_page;
mod fingerprint;
mod format;
mod history_page;
pub(crate) mod overview;
mod plot;
mod queue_page;
mod rounds;
mod runner_page;

use askama::Template;
use axum::Router;
use axum::response::Html;
use axum::routing::get;

use crate::{ApiError, AppState};

/// The dashboard's pages and read-only JSON; behind `BENCHGATE_DASHBOARD_TOKEN` when it is set.
pub fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/", get(overview::page))
        .route("/runners/{name}", get(runner_page::page))
        .route("/comparisons", get(comparison_list::page))
        .route("/comparisons/{id}", get(comparison_page::page))
        .route(
            "/comparisons/{id}/profile.svg",
            get(crate::http::profile::svg),
        )
        .route(
            "/api/v1/comparisons/{id}/profile",
            get(crate::http::profile::json),
        )
        .route(
            "/repositories/{*name}",
            get(comparison_list::repository_page),
        )
        .route("/queue", get(queue_page::page))
        .route("/acceptances", get(acceptances_page::page))
        .route("/history", get(history_page::page))
        .route("/api/v1/history", get(history_page::json))
        .route("/api/v1/history.csv", get(history_page::csv))
        .route("/api/v1/runners", get(api::runners))
        .route("/api/v1/runners/{name}", get(api::runner))
        .route("/api/v1/runners/{name}/audit", get(runner_page::audit_json))
        .route("/api/v1/queue", get(api::queue))
        .route("/api/v1/comparisons", get(api::comparisons))
        .route(
            "/api/v1/comparisons/{id}/samples.csv",
            get(api::samples_csv),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            state,
            access::require_dashboard_token,
        ))
}

/// Renders a page template; a template error is an internal error like any other.
fn render(page: &impl Template) -> Result<Html<String>, ApiError> {
    page.render()
        .map(Html)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering a page: {e}")))
}
