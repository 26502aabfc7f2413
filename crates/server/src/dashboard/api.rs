//! The dashboard's data as JSON under `/api/v1` (docs/api.md), and a comparison's samples as
//! CSV. The same view types render the pages, so page and API never disagree.

use std::fmt::Write as _;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use benchgate_store::{ComparisonId, RunnerSeries};
use chrono::Utc;
use serde::Deserialize;

use super::comparison_list::FilterQuery;
use super::overview::{ComparisonSummary, RunnerSummary, comparison_summaries, runner_summaries};
use super::queue_page::{QueueView, queue_view};
use super::runner_page::{RunnerDetail, runner_detail};
use crate::{ApiError, AppState};

/// Most comparisons one list request returns.
const MAX_LIST: i64 = 200;

/// `GET /api/v1/runners`: every runner with its status.
pub async fn runners(State(app): State<AppState>) -> Result<Json<Vec<RunnerSummary>>, ApiError> {
    Ok(Json(
        runner_summaries(app.store.as_ref(), Utc::now()).await?,
    ))
}

/// `GET /api/v1/runners/{name}`: one runner with its floors and their history.
pub async fn runner(
    State(app): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<RunnerDetail>, ApiError> {
    Ok(Json(
        runner_detail(app.store.as_ref(), &name, Utc::now()).await?,
    ))
}

/// `GET /api/v1/queue`: queued and running jobs.
pub async fn queue(State(app): State<AppState>) -> Result<Json<QueueView>, ApiError> {
    Ok(Json(queue_view(app.store.as_ref(), Utc::now()).await?))
}

/// Paging of the comparison list (its filter is a [`FilterQuery`] of the same query string).
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    limit: Option<i64>,
}

/// `GET /api/v1/comparisons?limit=N&repository=&pr=&runner=&verdict=`: the newest comparisons
/// that match, with their verdict counts.
pub async fn comparisons(
    State(app): State<AppState>,
    Query(q): Query<ListQuery>,
    Query(filter): Query<FilterQuery>,
) -> Result<Json<Vec<ComparisonSummary>>, ApiError> {
    let limit = q.limit.unwrap_or(20);
    if !(1..=MAX_LIST).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_LIST}"
        )));
    }
    let filter = filter.to_filter()?;
    Ok(Json(
        comparison_summaries(app.store.as_ref(), &filter, limit, Utc::now()).await?,
    ))
}

/// `GET /api/v1/comparisons/{id}/samples.csv`: every stored sample of the comparison.
pub async fn samples_csv(
    State(app): State<AppState>,
    Path(id): Path<i64>,
) -> Result<impl IntoResponse, ApiError> {
    let id = ComparisonId(id);
    if app.store.comparison(id).await?.is_none() {
        return Err(ApiError::NotFound(format!("no comparison {id}")));
    }
    let csv = samples_to_csv(&app.store.comparison_samples(id).await?);
    let disposition = format!("attachment; filename=\"comparison-{id}-samples.csv\"");
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        csv,
    ))
}

/// The header and one line per sample, in the store's order (runner, job, attempt, round).
fn samples_to_csv(series: &[RunnerSeries]) -> String {
    let mut out = String::from(
        "runner,job,attempt,round,side,position,benchmark,metric,unit,value,lower,upper,recorded_at\n",
    );
    let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for s in series {
        for x in &s.samples {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                text_field(&s.runner_name),
                x.job_id,
                x.attempt,
                x.round,
                x.side.as_str(),
                x.position,
                text_field(&x.benchmark),
                text_field(&x.metric),
                text_field(&x.unit),
                x.value,
                opt(x.lower),
                opt(x.upper),
                x.recorded_at.to_rfc3339(),
            );
        }
    }
    out
}

/// A text cell: quoted when it holds a separator, and kept from being read as a spreadsheet
/// formula, since benchmark names come from the code under test.
fn text_field(s: &str) -> String {
    let guarded = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

#[cfg(test)]
mod tests {
    use super::text_field;

    #[test]
    fn csv_text_is_quoted_and_never_a_formula() {
        assert_eq!(text_field("parse/json"), "parse/json");
        assert_eq!(text_field("a,b"), "\"a,b\"");
        assert_eq!(text_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(text_field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
    }
}
