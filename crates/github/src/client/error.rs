//! One error type for every GitHub call, split the way the outbox needs it: retry later (and
//! when), or give up.

use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, StatusCode};

/// How long to wait on a rate limit that gives no hint; GitHub's docs say at least a minute.
pub const DEFAULT_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// A failed GitHub call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitHubError {
    /// GitHub answered with a status that is not success.
    #[error("GitHub answered {status} to {method} {path}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The request method.
        method: String,
        /// The request path (no host, no token).
        path: String,
        /// GitHub's `message`, or the start of the body.
        message: String,
        /// Whether trying again later can succeed (5xx, rate limits, an expired token).
        retryable: bool,
        /// How long GitHub asked us to wait, when it said.
        retry_after: Option<Duration>,
    },
    /// No answer: connection refused, reset, timed out.
    #[error("could not reach GitHub for {method} {path}: {message}")]
    Transport {
        /// The request method.
        method: String,
        /// The request path.
        path: String,
        /// What failed.
        message: String,
    },
    /// GitHub answered success with a body we could not read.
    #[error("unexpected answer from GitHub to {method} {path}: {message}")]
    Decode {
        /// The request method.
        method: String,
        /// The request path.
        path: String,
        /// What did not fit.
        message: String,
    },
    /// The client is set up wrongly (bad key, bad base URL, missing installation id).
    #[error("GitHub client configuration: {0}")]
    Config(String),
}

impl GitHubError {
    /// Whether the outbox should try again.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Status { retryable, .. } => *retryable,
            Self::Transport { .. } => true,
            Self::Decode { .. } | Self::Config(_) => false,
        }
    }

    /// The wait GitHub asked for (`Retry-After` or `x-ratelimit-reset`), if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The HTTP status, when GitHub answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether this is a 404.
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }
}

/// Classifies a non-success answer. `message` is GitHub's error text, used to recognise the
/// secondary rate limit, which comes as a 403 without headers that say so.
pub(crate) fn classify(
    status: StatusCode,
    headers: &HeaderMap,
    message: &str,
    now: DateTime<Utc>,
) -> (bool, Option<Duration>) {
    let retry_after = retry_after_header(headers, now);
    let remaining_zero = header_str(headers, "x-ratelimit-remaining").is_some_and(|v| v == "0");
    let reset_wait = header_str(headers, "x-ratelimit-reset")
        .and_then(|v| v.parse::<i64>().ok())
        .map(|reset| {
            Duration::from_secs(u64::try_from(reset - now.timestamp()).unwrap_or(0).max(1))
        });
    let mentions_rate_limit = message.to_ascii_lowercase().contains("rate limit");
    match status.as_u16() {
        429 => (
            true,
            retry_after
                .or(reset_wait.filter(|_| remaining_zero))
                .or(Some(DEFAULT_RATE_LIMIT_WAIT)),
        ),
        403 if retry_after.is_some() => (true, retry_after),
        403 if remaining_zero => (true, reset_wait.or(Some(DEFAULT_RATE_LIMIT_WAIT))),
        403 if mentions_rate_limit => (true, Some(DEFAULT_RATE_LIMIT_WAIT)),
        s if (500..600).contains(&s) => (true, retry_after),
        _ => (false, None),
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

/// `Retry-After` as seconds or as an HTTP date.
fn retry_after_header(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let value = header_str(headers, "retry-after")?;
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    let secs = (at.with_timezone(&Utc) - now).num_seconds().max(0);
    Some(Duration::from_secs(secs as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn statuses_are_classified() {
        let now = DateTime::from_timestamp(1_663_844_000, 0).unwrap();
        let s = |n| StatusCode::from_u16(n).unwrap();
        let secs = |n| Some(Duration::from_secs(n));
        type Row = (
            u16,
            &'static [(&'static str, &'static str)],
            &'static str,
            (bool, Option<Duration>),
        );
        let table: &[Row] = &[
            (500, &[], "", (true, None)),
            (502, &[("retry-after", "7")], "", (true, secs(7))),
            (429, &[("retry-after", "30")], "", (true, secs(30))),
            (429, &[], "", (true, Some(DEFAULT_RATE_LIMIT_WAIT))),
            (
                429,
                &[("retry-after", "Thu, 22 Sep 2022 10:54:00 GMT")],
                "",
                (true, secs(40)),
            ),
            (403, &[("retry-after", "12")], "", (true, secs(12))),
            (
                403,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", "1663844087"),
                ],
                "",
                (true, secs(87)),
            ),
            (
                403,
                &[
                    ("x-ratelimit-remaining", "4927"),
                    ("x-ratelimit-reset", "1570132527"),
                ],
                "Must have push access",
                (false, None),
            ),
            (
                403,
                &[],
                "You have exceeded a secondary rate limit",
                (true, Some(DEFAULT_RATE_LIMIT_WAIT)),
            ),
            (404, &[], "Not Found", (false, None)),
            (422, &[], "Validation Failed", (false, None)),
        ];
        for (status, hs, msg, want) in table {
            assert_eq!(
                classify(s(*status), &headers(hs), msg, now),
                *want,
                "{status} {hs:?}"
            );
        }
    }
}
