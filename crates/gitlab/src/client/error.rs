//! One error for every GitLab call, split the way an outbox needs it: try again later (and
//! when), or give up with GitLab's reason.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// What a GitLab call that did not succeed leaves to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitlabError {
    /// Rate limited (429), GitLab failing (5xx) or unreachable: the same call can succeed
    /// later; `after` is GitLab's own `Retry-After` or `RateLimit-Reset` when it sent one.
    #[error("GitLab is not answering now ({why}); try again {}", after_words(*after))]
    RetryLater {
        after: Option<Duration>,
        why: String,
    },
    /// GitLab refused the call as it is (4xx): the same call would be refused again.
    #[error("GitLab answered {status} for {what}: {message}")]
    Refused {
        status: u16,
        what: String,
        message: String,
    },
    /// The answer was not what GitLab documents.
    #[error("GitLab's answer to {what} could not be read: {why}")]
    Unreadable { what: String, why: String },
}

fn after_words(after: Option<Duration>) -> String {
    after.map_or("later".to_owned(), |d| format!("in {} s", d.as_secs()))
}

impl GitlabError {
    /// The error for a non-success answer: status, headers and (at most 4 KiB of) the body.
    pub(crate) fn from_answer(
        status: StatusCode,
        headers: &HeaderMap,
        body: &str,
        what: &str,
    ) -> Self {
        let message = message_of(body);
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            return GitlabError::RetryLater {
                after: retry_after(headers, SystemTime::now()),
                why: format!("{} for {what}: {message}", status.as_u16()),
            };
        }
        GitlabError::Refused {
            status: status.as_u16(),
            what: what.to_owned(),
            message,
        }
    }

    /// Whether the same call may succeed later.
    pub fn is_transient(&self) -> bool {
        matches!(self, GitlabError::RetryLater { .. })
    }

    /// When GitLab said to try again, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            GitlabError::RetryLater { after, .. } => *after,
            _ => None,
        }
    }
}

/// GitLab's `{"message": …}` or `{"error": …}` as one line (a field's errors joined), else the
/// body's first 200 characters.
fn message_of(body: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let text = match value.get("message").or_else(|| value.get("error")) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => body.to_owned(),
    };
    text.chars().take(200).collect()
}

/// `Retry-After` (seconds), else `RateLimit-Reset` (a Unix time) counted from `now`.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    if let Some(secs) = number("retry-after") {
        return Some(Duration::from_secs(secs));
    }
    let reset = number("ratelimit-reset")?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(reset.saturating_sub(now)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn a_rate_limit_says_when_from_either_header() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let mut h = HeaderMap::new();
        h.insert("ratelimit-reset", HeaderValue::from_static("1042"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(42)));
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(
            retry_after(&h, now),
            Some(Duration::from_secs(7)),
            "Retry-After first"
        );
        let e =
            GitlabError::from_answer(StatusCode::TOO_MANY_REQUESTS, &h, "Retry later", "a note");
        assert!(e.is_transient(), "{e}");
        assert_eq!(
            e.to_string(),
            "GitLab is not answering now (429 for a note: Retry later); try again in 7 s"
        );
    }

    #[test]
    fn a_refusal_quotes_gitlabs_message() {
        let body = r#"{"message":{"description":["is too long (maximum is 255 characters)"]}}"#;
        let e =
            GitlabError::from_answer(StatusCode::BAD_REQUEST, &HeaderMap::new(), body, "a status");
        assert!(!e.is_transient());
        assert!(
            e.to_string()
                .contains("is too long (maximum is 255 characters)"),
            "{e}"
        );
    }
}
