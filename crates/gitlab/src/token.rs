//! `X-Gitlab-Token`: GitLab sends the hook's secret token as it is, on every delivery (no
//! signature over the body), so the check is an equality, done in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The header GitLab puts the hook's secret token in.
pub const TOKEN_HEADER: &str = "X-Gitlab-Token";

/// A delivery whose token is not one of ours; answered 401 and never parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("no X-Gitlab-Token header: set the hook's secret token to benchgate's")]
    Missing,
    #[error("X-Gitlab-Token does not match: the hook's secret token is not benchgate's")]
    Mismatch,
}

/// The tokens a delivery may carry: one, or two while a token is rotated.
#[derive(Clone)]
pub struct HookTokens {
    /// SHA-256 of each token: every comparison then has the same length, so the time taken
    /// says nothing about a guess's length either.
    digests: Vec<[u8; 32]>,
}

impl std::fmt::Debug for HookTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookTokens({} token(s), redacted)", self.digests.len())
    }
}

impl HookTokens {
    /// Tokens as configured; empty ones are left out (a hook without a token is refused).
    pub fn new<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let digests = tokens
            .into_iter()
            .filter(|t| !t.as_ref().is_empty())
            .map(|t| digest(t.as_ref()))
            .collect();
        HookTokens { digests }
    }

    /// Whether `header` (the `X-Gitlab-Token` value) is one of the tokens. Every token is
    /// compared, whichever matches.
    pub fn verify(&self, header: Option<&str>) -> Result<(), TokenError> {
        let given = header
            .filter(|h| !h.is_empty())
            .ok_or(TokenError::Missing)?;
        let given = digest(given);
        let matched = self
            .digests
            .iter()
            .fold(subtle::Choice::from(0), |any, d| any | d.ct_eq(&given));
        if bool::from(matched) {
            Ok(())
        } else {
            Err(TokenError::Mismatch)
        }
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_configured_token_passes() {
        let tokens = HookTokens::new(["old-secret", "new-secret"]);
        assert_eq!(tokens.verify(Some("new-secret")), Ok(()));
        assert_eq!(tokens.verify(Some("old-secret")), Ok(()));
        assert_eq!(tokens.verify(Some("new-secre")), Err(TokenError::Mismatch));
        assert_eq!(
            tokens.verify(Some("new-secret ")),
            Err(TokenError::Mismatch)
        );
        assert_eq!(tokens.verify(None), Err(TokenError::Missing));
        assert_eq!(tokens.verify(Some("")), Err(TokenError::Missing));
        assert!(!format!("{tokens:?}").contains("secret"));
    }

    #[test]
    fn no_token_configured_refuses_everything() {
        let none = HookTokens::new([""]);
        assert_eq!(none.verify(Some("")), Err(TokenError::Missing));
        assert_eq!(none.verify(Some("anything")), Err(TokenError::Mismatch));
    }
}
