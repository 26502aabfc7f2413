//! `/metrics` in the Prometheus text format: queue depth, job durations, webhooks by outcome,
//! outbox backlog, and process counters other modules increment (e.g. GitHub API errors).
//!
//! Store-backed figures are read at scrape time; events that leave no row (an API error) are
//! counted here, in statics, so any module can count without holding state:
//! `metrics::GITHUB_API_ERRORS.inc()`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use chrono::Utc;

use crate::{ApiError, AppState};

/// A monotonically increasing process counter, exported as `<name>_total`.
pub struct Counter {
    name: &'static str,
    help: &'static str,
    value: AtomicU64,
}

impl Counter {
    /// A counter starting at zero; add it to [`COUNTERS`] to export it.
    pub const fn new(name: &'static str, help: &'static str) -> Self {
        Self {
            name,
            help,
            value: AtomicU64::new(0),
        }
    }

    /// Adds one.
    pub fn inc(&self) {
        self.value.fetch_add(1, Ordering::Relaxed);
    }

    /// The current count.
    pub fn get(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }
}

/// GitHub API calls that failed (any status or transport error), counted by the client's callers.
pub static GITHUB_API_ERRORS: Counter = Counter::new(
    "benchgate_github_api_errors",
    "GitHub API calls that failed.",
);

/// Every exported process counter.
pub static COUNTERS: &[&Counter] = &[&GITHUB_API_ERRORS];

/// Newest comparisons whose finished jobs feed the job-duration figures.
const DURATION_WINDOW: i64 = 50;

/// The `/metrics` route. Public even when the dashboard token is set: it carries counts only,
/// and scrapers are usually configured per network rather than per token.
pub fn routes() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

/// The metrics page as Prometheus scrapes it.
async fn metrics(State(app): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let text = render(&app).await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    ))
}

/// Writes `# HELP` and `# TYPE` once per metric family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value escaped as the text format requires.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

async fn render(app: &AppState) -> Result<String, ApiError> {
    let store = app.store.as_ref();
    let mut out = String::new();

    let depth = store.queue_depth().await?;
    family(
        &mut out,
        "benchgate_queue_jobs",
        "gauge",
        "Jobs in the queue by state.",
    );
    let _ = writeln!(
        out,
        "benchgate_queue_jobs{{state=\"queued\"}} {}",
        depth.queued
    );
    let _ = writeln!(
        out,
        "benchgate_queue_jobs{{state=\"running\"}} {}",
        depth.running
    );

    let now = Utc::now();
    let oldest_running = store
        .active_jobs()
        .await?
        .iter()
        // A requeued job keeps its first start time; only a job running now is counted.
        .filter(|j| j.state == benchgate_store::model::JobState::Running)
        .filter_map(|j| j.started_at)
        .map(|t| (now - t).num_milliseconds() as f64 / 1000.0)
        .fold(0.0, f64::max);
    family(
        &mut out,
        "benchgate_running_job_age_seconds_max",
        "gauge",
        "Seconds since the longest-running active job was first claimed.",
    );
    let _ = writeln!(
        out,
        "benchgate_running_job_age_seconds_max {oldest_running}"
    );

    let mut durations = Vec::new();
    for c in store.recent_comparisons(DURATION_WINDOW).await? {
        for j in store.comparison_jobs(c.id).await? {
            if let (Some(s), Some(f)) = (j.started_at, j.finished_at) {
                durations.push((f - s).num_milliseconds() as f64 / 1000.0);
            }
        }
    }
    durations.sort_by(f64::total_cmp);
    family(
        &mut out,
        "benchgate_recent_job_duration_seconds",
        "gauge",
        "Start-to-finish seconds of the finished jobs of the 50 newest comparisons, by quantile.",
    );
    for q in [0.5, 0.9, 0.99, 1.0] {
        if let Some(v) = quantile(&durations, q) {
            let _ = writeln!(
                out,
                "benchgate_recent_job_duration_seconds{{quantile=\"{q}\"}} {v}"
            );
        }
    }
    family(
        &mut out,
        "benchgate_recent_jobs_finished",
        "gauge",
        "Finished jobs the duration quantiles are computed from.",
    );
    let _ = writeln!(out, "benchgate_recent_jobs_finished {}", durations.len());

    family(
        &mut out,
        "benchgate_webhook_deliveries_total",
        "counter",
        "Webhook deliveries recorded, by what the server made of them.",
    );
    for (outcome, n) in store.deliveries_by_outcome().await? {
        let _ = writeln!(
            out,
            "benchgate_webhook_deliveries_total{{outcome=\"{}\"}} {n}",
            label(&outcome)
        );
    }

    family(
        &mut out,
        "benchgate_outbox_backlog",
        "gauge",
        "GitHub writes recorded and not yet delivered.",
    );
    let _ = writeln!(
        out,
        "benchgate_outbox_backlog {}",
        store.outbox_backlog().await?
    );

    for c in COUNTERS {
        let name = format!("{}_total", c.name);
        family(&mut out, &name, "counter", c.help);
        let _ = writeln!(out, "{name} {}", c.get());
    }
    Ok(out)
}

/// The nearest-rank quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), Some(2.0));
        assert_eq!(quantile(&v, 1.0), Some(4.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
