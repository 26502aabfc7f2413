//! `/acceptances`: every `/benchgate accept` by repository — who, when, which head and rows, why,
//! and who took it back. The audit trail of regressions merged on purpose.

use askama::Template;
use axum::extract::State;
use axum::response::Html;
use benchgate_store::model::Acceptance;

use super::render;
use crate::{ApiError, AppState};
use benchgate_stats::words::short_sha;

/// At most this many acceptances on the page (newest first within each repository).
const SHOWN: i64 = 500;

#[derive(Template)]
#[template(path = "dashboard/acceptances.html")]
struct AcceptancesPage {
    repositories: Vec<(String, Vec<Row>)>,
}

struct Row {
    pr: i64,
    head: String,
    by: String,
    at: String,
    reason: String,
    rows: String,
    /// `taken back by X on …`, or empty while in force.
    revoked: String,
}

/// The page.
pub async fn page(State(app): State<AppState>) -> Result<Html<String>, ApiError> {
    let all = app.store.acceptances(SHOWN).await?;
    let mut repositories: Vec<(String, Vec<Row>)> = Vec::new();
    for a in all {
        let row = row(&a);
        match repositories.last_mut() {
            Some((name, rows)) if *name == a.repository => rows.push(row),
            _ => repositories.push((a.repository.clone(), vec![row])),
        }
    }
    render(&AcceptancesPage { repositories })
}

fn row(a: &Acceptance) -> Row {
    let when = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    Row {
        pr: a.pr_number,
        head: short_sha(&a.head_sha).to_owned(),
        by: a.accepted_by.clone(),
        at: when(a.created_at),
        reason: a.reason.clone(),
        rows: a.rows.join(", "),
        revoked: match (&a.revoked_by, a.revoked_at) {
            (Some(by), Some(at)) => format!("taken back by {by} on {}", when(at)),
            _ => String::new(),
        },
    }
}
