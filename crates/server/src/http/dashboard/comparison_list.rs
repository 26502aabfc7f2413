//! `/comparisons` (filtered by repository, PR, runner, verdict and kind, with a small form) and
//! `/repositories/{name}` (one repository's comparisons). The same query parameters filter
//! `GET /api/v1/comparisons`.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Html;
use benchgate_api::VerdictKind;
use benchgate_store::{ComparisonFilter, ComparisonKind};
use chrono::Utc;
use serde::Deserialize;

use super::overview::{ComparisonSummary, comparison_summaries, runner_summaries};
use super::render;
use crate::{ApiError, AppState};

/// Comparisons a filtered page lists.
const LISTED: i64 = 100;

/// Verdicts a list can be filtered by, in the order the form offers them.
const VERDICTS: [VerdictKind; 10] = [
    VerdictKind::Slower,
    VerdictKind::Faster,
    VerdictKind::Exact,
    VerdictKind::Equivalent,
    VerdictKind::NotSlower,
    VerdictKind::NoResultYet,
    VerdictKind::BelowResolution,
    VerdictKind::NotAnalysed,
    VerdictKind::OnlyInBase,
    VerdictKind::OnlyInHead,
];

/// The filter as a form or a script sends it: every field optional, an empty one ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FilterQuery {
    #[serde(default)]
    pub repository: String,
    #[serde(default)]
    pub pr: String,
    #[serde(default)]
    pub runner: String,
    #[serde(default)]
    pub verdict: String,
    /// One kind or several, comma-separated (`pull_request,merge_group`).
    #[serde(default)]
    pub kind: String,
}

impl FilterQuery {
    /// The store's filter; a PR that is not a number, an unknown verdict or kind is a 400.
    pub fn to_filter(&self) -> Result<ComparisonFilter, ApiError> {
        let given = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        let pr_number = given(&self.pr)
            .map(|pr| {
                pr.trim_start_matches('#')
                    .parse::<i64>()
                    .map_err(|_| ApiError::BadRequest(format!("pr must be a number, not {pr:?}")))
            })
            .transpose()?;
        let verdict = given(&self.verdict)
            .map(|v| {
                VERDICTS
                    .into_iter()
                    .find(|k| verdict_param(*k) == v)
                    .ok_or_else(|| {
                        let known: Vec<String> = VERDICTS.into_iter().map(verdict_param).collect();
                        ApiError::BadRequest(format!(
                            "unknown verdict {v:?}; one of {}",
                            known.join(", ")
                        ))
                    })
            })
            .transpose()?;
        let kinds = self
            .kind
            .split(',')
            .filter_map(given)
            .map(|k| {
                ComparisonKind::parse(&k).ok_or_else(|| {
                    let known: Vec<&str> = ComparisonKind::ALL.map(ComparisonKind::as_str).into();
                    ApiError::BadRequest(format!("unknown kind {k:?}; one of {}", known.join(", ")))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ComparisonFilter {
            repository: given(&self.repository),
            pr_number,
            runner: given(&self.runner),
            verdict,
            kinds,
        })
    }
}

/// A verdict as a query parameter names it: its JSON name (`no_result_yet`).
fn verdict_param(kind: VerdictKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A kind as the form's menu names it.
fn kind_words(kind: ComparisonKind) -> &'static str {
    match kind {
        ComparisonKind::PullRequest => "pull request",
        ComparisonKind::MergeGroup => "merge group",
        ComparisonKind::MainStep => "history step",
        ComparisonKind::MainAnchor => "history anchor",
        ComparisonKind::Canary => "canary",
        ComparisonKind::LayoutSession => "layout session",
        ComparisonKind::Plain => "plain (admin API, culprit probe)",
    }
}

/// One choice of the form's verdict or kind menu.
struct VerdictOption {
    value: String,
    words: &'static str,
    selected: bool,
}

#[derive(Template)]
#[template(path = "dashboard/comparisons.html")]
struct ComparisonsPage {
    /// The repository a repository page is about; `None` on `/comparisons`.
    repository: Option<String>,
    query: FilterQuery,
    verdicts: Vec<VerdictOption>,
    kinds: Vec<VerdictOption>,
    runners: Vec<String>,
    comparisons: Vec<ComparisonSummary>,
}

async fn list_page(
    app: &AppState,
    repository: Option<String>,
    query: FilterQuery,
) -> Result<Html<String>, ApiError> {
    let filter = query.to_filter()?;
    let now = Utc::now();
    let comparisons = comparison_summaries(app.store.as_ref(), &filter, LISTED, now).await?;
    let runners = runner_summaries(app.store.as_ref(), now)
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    let verdicts = VERDICTS
        .into_iter()
        .map(|k| VerdictOption {
            value: verdict_param(k),
            words: benchgate_stats::words::verdict_kind(k),
            selected: filter.verdict == Some(k),
        })
        .collect();
    let kinds = ComparisonKind::ALL
        .into_iter()
        .map(|k| VerdictOption {
            value: k.as_str().to_owned(),
            words: kind_words(k),
            selected: filter.kinds == [k],
        })
        .collect();
    render(&ComparisonsPage {
        repository,
        query,
        verdicts,
        kinds,
        runners,
        comparisons,
    })
}

/// `/comparisons?repository=&pr=&runner=&verdict=&kind=`: the newest comparisons that match.
pub async fn page(
    State(app): State<AppState>,
    Query(query): Query<FilterQuery>,
) -> Result<Html<String>, ApiError> {
    list_page(&app, None, query).await
}

/// `/repositories/{owner}/{name}`: one repository's comparisons, the rest of the filter kept.
pub async fn repository_page(
    State(app): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<FilterQuery>,
) -> Result<Html<String>, ApiError> {
    let query = FilterQuery {
        repository: name.clone(),
        ..query
    };
    list_page(&app, Some(name), query).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_fields_match_everything_and_bad_ones_are_named() {
        let q = FilterQuery::default();
        assert_eq!(q.to_filter().unwrap(), ComparisonFilter::default());
        let q = FilterQuery {
            repository: " acme/widgets ".into(),
            pr: "#42".into(),
            runner: "quiet-1".into(),
            verdict: "no_result_yet".into(),
            kind: "pull_request, merge_group".into(),
        };
        let f = q.to_filter().unwrap();
        assert_eq!(f.repository.as_deref(), Some("acme/widgets"));
        assert_eq!(f.pr_number, Some(42));
        assert_eq!(f.verdict, Some(VerdictKind::NoResultYet));
        assert_eq!(
            f.kinds,
            [ComparisonKind::PullRequest, ComparisonKind::MergeGroup]
        );
        let bad = FilterQuery {
            kind: "pull_request,canaries".into(),
            ..FilterQuery::default()
        };
        assert!(
            matches!(bad.to_filter(), Err(ApiError::BadRequest(m)) if m.contains("\"canaries\"") && m.contains("layout_session"))
        );
        let bad = FilterQuery {
            pr: "forty-two".into(),
            ..FilterQuery::default()
        };
        assert!(matches!(bad.to_filter(), Err(ApiError::BadRequest(m)) if m.contains("forty-two")));
        let bad = FilterQuery {
            verdict: "worse".into(),
            ..FilterQuery::default()
        };
        assert!(matches!(bad.to_filter(), Err(ApiError::BadRequest(m)) if m.contains("slower")));
    }
}
