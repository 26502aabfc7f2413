//! Who is calling: a runner with its bearer token, or an operator with the admin token.
//! Both are extractors, so a handler that names one cannot run unauthenticated.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use benchgate_store::Runner;
use subtle::ConstantTimeEq;

use crate::{ApiError, AppState};

/// A runner authenticated by its bearer token (unrevoked); its last-seen time is updated.
#[derive(Debug, Clone)]
pub struct RunnerAuth(pub Runner);

/// A caller holding `BENCHGATE_ADMIN_TOKEN`.
#[derive(Debug, Clone, Copy)]
pub struct AdminAuth;

/// The token of an `Authorization: Bearer …` header, if there is one.
fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl FromRequestParts<AppState> for RunnerAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let token = bearer_token(parts).ok_or(ApiError::Unauthorized)?;
        let runner = app
            .store
            .authenticate_runner(token)
            .await?
            .ok_or(ApiError::Unauthorized)?;
        app.store.touch_runner(runner.id, None).await?;
        Ok(RunnerAuth(runner))
    }
}

impl FromRequestParts<AppState> for AdminAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let expected = app.config.admin_token.as_deref().filter(|t| !t.is_empty());
        match (expected, bearer_token(parts)) {
            (Some(expected), Some(given))
                if bool::from(expected.as_bytes().ct_eq(given.as_bytes())) =>
            {
                Ok(AdminAuth)
            }
            _ => Err(ApiError::Unauthorized),
        }
    }
}
