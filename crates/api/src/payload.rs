//! A forge's webhook payload read into serde shapes, with one error for both forges: where in
//! the JSON it went wrong, so a 400 says which field.

use serde::de::DeserializeOwned;

/// A payload that is not valid JSON or lacks a field benchgate needs; answered with 400.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventParseError {
    /// The event header's value (`X-GitHub-Event`, `X-Gitlab-Event`).
    pub event: String,
    /// Where in the JSON it went wrong, e.g. `pull_request.head.sha`; `.` for the top level.
    pub path: String,
    /// 1-based line in the body.
    pub line: usize,
    /// 1-based column in the body.
    pub column: usize,
    /// serde_json's description of the problem.
    pub message: String,
}

impl std::fmt::Display for EventParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid {} payload at `{}` (line {}, column {}): {}",
            self.event, self.path, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for EventParseError {}

/// `body` as `T`; trailing bytes after the JSON value are as malformed as a syntax error in it.
pub fn decode<T: DeserializeOwned>(event: &str, body: &[u8]) -> Result<T, EventParseError> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        EventParseError {
            event: event.to_owned(),
            path,
            line: inner.line(),
            column: inner.column(),
            message: strip_position(&inner.to_string()),
        }
    })?;
    de.end().map_err(|e| EventParseError {
        event: event.to_owned(),
        path: ".".to_owned(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    Ok(value)
}

/// serde_json appends " at line L column C"; the error has those as fields instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}
