//! The manifest flow's code exchange: `POST /app-manifests/{code}/conversions`, which needs no
//! authentication (the one-hour, single-use code is the credential).

use std::time::Duration;

use http::{Method, header};
use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;

use super::{GitHubError, JSON, decode, error_message};
use crate::app_manifest::{ManifestConversion, is_manifest_code};

/// The path as errors name it: the code is a credential until used, so it never reaches a log.
const MASKED_PATH: &str = "/app-manifests/***/conversions";

/// Exchanges a manifest `code` for the new App's id, key and webhook secret.
pub async fn convert_manifest_code(
    api_url: &str,
    code: &str,
    timeout: Duration,
) -> Result<ManifestConversion, GitHubError> {
    if !is_manifest_code(code) {
        return Err(GitHubError::Config("the manifest code is malformed".into()));
    }
    let api_url = api_url.trim_end_matches('/');
    let octo = Octocrab::builder()
        .base_uri(api_url)
        .map_err(|e| GitHubError::Config(format!("API URL {api_url:?}: {e}")))?
        .add_retry_config(RetryConfig::None)
        .set_connect_timeout(Some(timeout))
        .set_read_timeout(Some(timeout))
        .build()
        .map_err(|e| GitHubError::Config(e.to_string()))?;
    let transport = |message: String| GitHubError::Transport {
        method: Method::POST.to_string(),
        path: MASKED_PATH.into(),
        message,
    };
    let request = http::Request::builder()
        .method(Method::POST)
        .uri(format!("/app-manifests/{code}/conversions"))
        .header(header::ACCEPT, JSON);
    let request = octo
        .build_request(request, None::<&()>)
        .map_err(|e| GitHubError::Config(e.to_string()))?;
    let response = octo
        .execute(request)
        .await
        .map_err(|e| transport(e.to_string()))?;
    let status = response.status();
    let body = octo
        .body_to_string(response)
        .await
        .map_err(|e| transport(e.to_string()))?;
    if !status.is_success() {
        return Err(GitHubError::Status {
            status: status.as_u16(),
            method: Method::POST.to_string(),
            path: MASKED_PATH.into(),
            message: error_message(&body),
            retryable: false,
            retry_after: None,
        });
    }
    decode(&Method::POST, MASKED_PATH, &body)
}
