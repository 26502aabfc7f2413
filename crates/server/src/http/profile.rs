//! The profile routes: the differential flame graph of a comparison's newest profile and what
//! it says as JSON (asking for and storing profiles is `crate::profile`).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use benchgate_store::model::ComparisonId;
use serde::Serialize;

use crate::report::{self, ProfileView};
use crate::{ApiError, AppState};

/// The newest profile of a comparison that has stacks, with its runner's name.
async fn newest(
    app: &AppState,
    id: i64,
) -> Result<(benchgate_store::StoredProfile, String), ApiError> {
    let profiles = app.store.comparison_profiles(ComparisonId(id)).await?;
    let Some(profile) = profiles.into_iter().next() else {
        return Err(ApiError::NotFound(format!(
            "comparison {id} has no profile"
        )));
    };
    let runner = app
        .store
        .runner(profile.runner_id)
        .await?
        .map_or_else(|| format!("runner {}", profile.runner_id), |r| r.name);
    Ok((profile, runner))
}

/// `GET /comparisons/{id}/profile.svg`: the differential flame graph, base to head (red: more
/// of head's samples, blue: fewer). Frame names come from PR code, so the SVG's own script is
/// not allowed to run: it is a picture.
pub async fn svg(State(app): State<AppState>, Path(id): Path<i64>) -> Result<Response, ApiError> {
    let (profile, runner) = newest(&app, id).await?;
    let Some(event) = profile.event.as_deref() else {
        return Err(ApiError::NotFound(format!(
            "comparison {id} was not profiled: {}",
            profile
                .unavailable
                .as_deref()
                .unwrap_or("no profiler on the runner")
        )));
    };
    let parse = |text: &str| benchgate_profile::Folded::parse(text).unwrap_or_default();
    let (how, _) = report::profile_source(event);
    let title = format!(
        "comparison #{id}: head vs base, {} on {runner}, {} run(s) per side",
        how.replace('`', ""),
        profile.runs
    );
    let svg = benchgate_profile::differential_svg(
        &parse(&profile.base_folded),
        &parse(&profile.head_folded),
        &title,
    )
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("drawing the flame graph: {e}")))?;
    let mut response = svg.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("image/svg+xml"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(response)
}

/// `GET /api/v1/comparisons/{id}/profile`: what the newest profile says.
#[derive(Debug, Serialize)]
pub struct ProfileJson {
    pub comparison: i64,
    pub runner: String,
    /// `cycles` or `cpu-clock`; absent when no profiler could run.
    pub event: Option<String>,
    pub unavailable: Option<String>,
    pub runs: i64,
    pub base_samples: u64,
    pub head_samples: u64,
    pub lacks_symbols: bool,
    /// Every function whose share changed, largest change first.
    pub functions: Vec<benchgate_profile::FunctionChange>,
    pub svg: Option<String>,
}

/// `GET /api/v1/comparisons/{id}/profile`.
pub async fn json(
    State(app): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<ProfileJson>, ApiError> {
    let (profile, runner) = newest(&app, id).await?;
    let url = app.config.github.comparison_url(id);
    let (event, unavailable, runs) = (
        profile.event.clone(),
        profile.unavailable.clone(),
        profile.runs,
    );
    Ok(Json(
        match report::profile_view(profile, runner.clone(), &url) {
            ProfileView::Ready(p) => ProfileJson {
                comparison: id,
                runner,
                event,
                unavailable,
                runs,
                base_samples: p.base_samples,
                head_samples: p.head_samples,
                lacks_symbols: p.lacks_symbols,
                functions: p.functions,
                svg: Some(p.svg_url),
            },
            _ => ProfileJson {
                comparison: id,
                runner,
                event,
                unavailable,
                runs,
                base_samples: 0,
                head_samples: 0,
                lacks_symbols: false,
                functions: Vec::new(),
                svg: None,
            },
        },
    ))
}
