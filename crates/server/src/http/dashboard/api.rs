//! The dashboard's data as JSON under `/api/v1` (docs/api.md), and a comparison's samples as
//! CSV. The same view types render the pages, so page and API never disagree.

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
/// The `csv` crate quotes; text cells are kept from being read as spreadsheet formulas.
fn samples_to_csv(series: &[RunnerSeries]) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let header = [
        "runner",
        "job",
        "attempt",
        "round",
        "side",
        "position",
        "benchmark",
        "metric",
        "unit",
        "value",
        "lower",
        "upper",
        "recorded_at",
    ];
    // Writing to memory cannot fail; a failed record would only lose that line.
    let _ = out.write_record(header);
    let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for s in series {
        for x in &s.samples {
            let _ = out.write_record([
                guard_formula(&s.runner_name),
                x.job_id.to_string(),
                x.attempt.to_string(),
                x.round.to_string(),
                x.side.as_str().to_owned(),
                x.position.to_string(),
                guard_formula(&x.benchmark),
                guard_formula(&x.metric),
                guard_formula(&x.unit),
                x.value.to_string(),
                opt(x.lower),
                opt(x.upper),
                x.recorded_at.to_rfc3339(),
            ]);
        }
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A text cell that a spreadsheet would run as a formula gets a leading `'`, since benchmark
/// names come from the code under test.
fn guard_formula(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_api::Side;
    use benchgate_store::model::{JobId, RunnerId, Sample};

    #[test]
    fn csv_cells_round_trip_quoted_and_never_a_formula() {
        let sample = |benchmark: &str| Sample {
            job_id: JobId(3),
            attempt: 1,
            runner_id: RunnerId(1),
            round: 2,
            side: Side::Head,
            position: 1,
            benchmark: benchmark.into(),
            metric: "time".into(),
            unit: "ns".into(),
            value: 1.5e6,
            lower: None,
            upper: Some(2.0e6),
            direction: Default::default(),
            recorded_at: chrono::Utc::now(),
        };
        let series = [RunnerSeries {
            runner_id: RunnerId(1),
            runner_name: "bench, \"quiet\"".into(),
            samples: vec![sample("parse/json,big\nline"), sample("=HYPERLINK(1)")],
        }];
        let text = samples_to_csv(&series);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert_eq!(&rows[0][0], "bench, \"quiet\"");
        assert_eq!(&rows[0][6], "parse/json,big\nline");
        assert_eq!(&rows[1][6], "'=HYPERLINK(1)");
        assert_eq!(
            (&rows[0][9], &rows[0][10], &rows[0][11]),
            ("1500000", "", "2000000")
        );
        assert_eq!(reader.headers().unwrap().len(), 13);
    }
}
