//! A runner's bearer token, shared by the store (which makes it and keeps only its hash) and the
//! agent (which reads it from a file or the environment and sends it).

use std::fmt;

/// A runner's bearer token in plain text; `Debug` never shows it, so it cannot reach a log line
/// through `{:?}`.
#[derive(Clone, PartialEq, Eq)]
pub struct RunnerToken(String);

impl RunnerToken {
    pub fn new(token: String) -> Self {
        RunnerToken(token)
    }

    /// The token itself: for the `Authorization` header, or to show the operator once.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for RunnerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunnerToken(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_never_shows_in_debug() {
        let t = RunnerToken::new("s3cr3t".into());
        assert_eq!(format!("{t:?}"), "RunnerToken(***)");
        assert_eq!(t.expose(), "s3cr3t");
    }
}
