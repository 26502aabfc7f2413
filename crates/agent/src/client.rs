//! The agent's side of the HTTP protocol (`benchgate_api::agent`), and retrying with
//! exponential backoff and jitter while the server is unreachable or answers 5xx.

use std::future::Future;
use std::time::Duration;

use benchgate_api::agent::{
    ClaimRequest, ClaimedJob, CompleteRequest, FingerprintRequest, HeartbeatRequest,
    HeartbeatResponse, ProfileUpload, ReleaseRequest, RoundUpload, UploadReceipt,
};
use reqwest::StatusCode;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a call to the server did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `401`: the token is wrong or was revoked. Retrying cannot help.
    #[error("the server rejected this runner's token (401): wrong or revoked")]
    Unauthorized,
    /// `409`: another holder has the job now (the lease expired) or the job ended.
    #[error("the lease on this job is lost (409)")]
    LeaseLost,
    /// Another 4xx: the request itself is wrong. Retrying cannot help.
    #[error("the server refused the request ({status}): {message}")]
    Rejected { status: StatusCode, message: String },
    /// No connection, a timeout or a 5xx: worth retrying.
    #[error("the server is unavailable: {0}")]
    Unavailable(String),
}

impl ClientError {
    /// Whether trying the same call again later can succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, ClientError::Unavailable(_))
    }
}

/// An HTTP client bound to one server and runner token.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// How long the server may hold a claim before answering 204.
pub const CLAIM_WAIT_SECS: u64 = 20;

impl Client {
    /// A client for the server at `base` (e.g. `http://127.0.0.1:8080`).
    pub fn new(base: &str, token: &str) -> Result<Self, ClientError> {
        // reqwest is built without a default TLS provider; installing one twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            // Longer than the longest claim hold, so a long poll is never cut short.
            .timeout(Duration::from_secs(CLAIM_WAIT_SECS + 30))
            .build()
            .map_err(|e| ClientError::Unavailable(e.to_string()))?;
        Ok(Client {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
        })
    }

    /// Long-polls for the next job; `None` when the server had nothing within the wait.
    pub async fn claim(&self, labels: &[String]) -> Result<Option<ClaimedJob>, ClientError> {
        let req = ClaimRequest {
            labels: labels.to_vec(),
            wait_secs: Some(CLAIM_WAIT_SECS),
        };
        self.post("/api/v1/jobs/claim", &req).await
    }

    /// Extends the lease; the answer says whether the job was cancelled.
    pub async fn heartbeat(
        &self,
        job: i64,
        req: &HeartbeatRequest,
    ) -> Result<HeartbeatResponse, ClientError> {
        self.post(&format!("/api/v1/jobs/{job}/heartbeat"), req)
            .await?
            .ok_or_else(|| ClientError::Unavailable("empty heartbeat answer".into()))
    }

    /// Uploads one finished round (idempotent: re-sending it stores nothing twice).
    pub async fn upload_round(
        &self,
        job: i64,
        round: &RoundUpload,
    ) -> Result<UploadReceipt, ClientError> {
        Ok(self
            .post(&format!("/api/v1/jobs/{job}/rounds"), round)
            .await?
            .unwrap_or_default())
    }

    /// Ends the job.
    pub async fn complete(&self, job: i64, req: &CompleteRequest) -> Result<(), ClientError> {
        self.post::<_, serde_json::Value>(&format!("/api/v1/jobs/{job}/complete"), req)
            .await
            .map(drop)
    }

    /// Stores a profile job's stacks.
    pub async fn upload_profile(&self, job: i64, req: &ProfileUpload) -> Result<(), ClientError> {
        self.post::<_, serde_json::Value>(&format!("/api/v1/jobs/{job}/profile"), req)
            .await
            .map(drop)
    }

    /// Gives the job back to the queue without using up an attempt.
    pub async fn release(&self, job: i64, req: &ReleaseRequest) -> Result<(), ClientError> {
        self.post::<_, serde_json::Value>(&format!("/api/v1/jobs/{job}/release"), req)
            .await
            .map(drop)
    }

    /// Reports this machine's fingerprint.
    pub async fn fingerprint(&self, req: &FingerprintRequest) -> Result<(), ClientError> {
        let resp = self
            .http
            .put(format!("{}/api/v1/runners/me/fingerprint", self.base))
            .bearer_auth(&self.token)
            .json(req)
            .send()
            .await;
        decode::<serde_json::Value>(resp).await.map(drop)
    }

    async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<Option<T>, ClientError> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await;
        decode(resp).await
    }
}

/// Maps an answer to a value (`None` for an empty body) or a classified error.
async fn decode<T: DeserializeOwned>(
    resp: Result<reqwest::Response, reqwest::Error>,
) -> Result<Option<T>, ClientError> {
    // The error's Display names the URL, never the Authorization header.
    let resp = resp.map_err(|e| ClientError::Unavailable(e.to_string()))?;
    let status = resp.status();
    match status {
        StatusCode::UNAUTHORIZED => return Err(ClientError::Unauthorized),
        StatusCode::CONFLICT => return Err(ClientError::LeaseLost),
        // A server restarting behind a proxy, or shedding load: try again later.
        s if s.is_server_error()
            || s == StatusCode::TOO_MANY_REQUESTS
            || s == StatusCode::REQUEST_TIMEOUT =>
        {
            return Err(ClientError::Unavailable(format!("HTTP {s}")));
        }
        s if !s.is_success() => {
            let message = resp.text().await.unwrap_or_default();
            return Err(ClientError::Rejected {
                status: s,
                message: message.chars().take(500).collect(),
            });
        }
        _ => {}
    }
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| ClientError::Unavailable(e.to_string()))?;
    if status == StatusCode::NO_CONTENT || bytes.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| ClientError::Rejected {
            status,
            message: format!("unreadable answer: {e}"),
        })
}

/// Exponential backoff with full jitter: waits up to 200 ms, 400 ms, … capped at `max`.
#[derive(Debug, Clone)]
pub struct Backoff {
    attempt: u32,
    max: Duration,
}

impl Backoff {
    /// A fresh backoff whose pauses never exceed `max`.
    pub fn new(max: Duration) -> Self {
        Backoff { attempt: 0, max }
    }

    /// The next pause: uniform in [ceiling/2, ceiling], where the ceiling doubles each time.
    /// Half the ceiling is kept so agents retrying together still spread out but never spin.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = Duration::from_millis(200)
            .saturating_mul(1u32 << self.attempt.min(16))
            .min(self.max);
        self.attempt = self.attempt.saturating_add(1);
        let jitter: f64 = rand::random();
        ceiling.mul_f64(0.5 + 0.5 * jitter)
    }
}

/// Runs `call` until it succeeds or fails with a non-transient error, sleeping with `backoff`
/// between attempts. `what` names the call in the log.
pub async fn with_retry<T, F, Fut>(what: &str, max: Duration, mut call: F) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    let mut backoff = Backoff::new(max);
    loop {
        match call().await {
            Err(e) if e.is_transient() => {
                let delay = backoff.next_delay();
                tracing::warn!(call = what, error = %e, retry_in_ms = delay.as_millis() as u64, "server unreachable; retrying");
                tokio::time::sleep(delay).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_stays_under_its_cap() {
        let mut b = Backoff::new(Duration::from_secs(2));
        let delays: Vec<_> = (0..10).map(|_| b.next_delay()).collect();
        assert!(delays[0] <= Duration::from_millis(200));
        assert!(delays[0] >= Duration::from_millis(100));
        assert!(delays[3] >= Duration::from_millis(800));
        assert!(delays.iter().all(|d| *d <= Duration::from_secs(2)));
        assert!(delays[9] >= Duration::from_secs(1));
    }

    #[test]
    fn debug_never_shows_the_token() {
        let c = Client::new("http://127.0.0.1:1", "secret-token-value").unwrap();
        assert!(!format!("{c:?}").contains("secret-token-value"));
    }
}
