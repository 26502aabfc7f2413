//! `X-Gitlab-Token`: GitLab sends the hook's secret token as it is, on every delivery (no
//! signature over the body), so the check is an equality, done in constant time. An external
//! status check's request instead carries `X-Gitlab-Signature`, the hex HMAC-SHA256 of the
//! body under the check's shared secret.

use hmac::Mac;
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

/// The header an external status check's request carries its HMAC in.
pub const SIGNATURE_HEADER: &str = "X-Gitlab-Signature";

/// A status check request not signed by one of our secrets; answered 401, never acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error(
        "no X-Gitlab-Signature header: give the status check an HMAC shared secret, the hook's secret token"
    )]
    Missing,
    #[error("X-Gitlab-Signature does not match the body under any of benchgate's secrets")]
    Mismatch,
}

/// The secrets a status check request may be signed with: the hook tokens (two while rotating).
#[derive(Clone)]
pub struct SigningSecrets(Vec<String>);

impl std::fmt::Debug for SigningSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningSecrets({} secret(s), redacted)", self.0.len())
    }
}

impl SigningSecrets {
    /// Secrets as configured; empty ones are left out.
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        SigningSecrets(
            secrets
                .into_iter()
                .map(|s| s.as_ref().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        )
    }

    /// Whether `header` is the HMAC of `body` under one of the secrets; every secret is tried,
    /// in constant time each.
    pub fn verify(&self, header: Option<&str>, body: &[u8]) -> Result<(), SignatureError> {
        let given = header
            .map(|h| h.trim())
            .map(|h| h.strip_prefix("sha256=").unwrap_or(h))
            .filter(|h| !h.is_empty())
            .ok_or(SignatureError::Missing)?;
        let given = hex::decode(given).map_err(|_| SignatureError::Mismatch)?;
        let mut matched = false;
        for secret in &self.0 {
            matched |= mac(secret, body).verify_slice(&given).is_ok();
        }
        if matched {
            Ok(())
        } else {
            Err(SignatureError::Mismatch)
        }
    }

    /// The header GitLab sends for `body` under the first secret (tests, replays).
    pub fn sign(&self, body: &[u8]) -> String {
        hex::encode(mac(&self.0[0], body).finalize().into_bytes())
    }
}

fn mac(secret: &str, body: &[u8]) -> hmac::Hmac<Sha256> {
    use hmac::KeyInit;
    let mut mac = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .expect("HMAC accepts keys of any length");
    mac.update(body);
    mac
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
    fn a_status_check_request_passes_only_signed_by_one_of_the_secrets() {
        let body = br#"{"object_kind":"merge_request"}"#;
        let secrets = SigningSecrets::new(["old-secret", "new-secret"]);
        // GitLab's DispatchService: OpenSSL::HMAC.hexdigest('sha256', secret, body).
        let by_old = SigningSecrets::new(["old-secret"]).sign(body);
        assert_eq!(by_old.len(), 64);
        assert_eq!(secrets.verify(Some(&by_old), body), Ok(()));
        assert_eq!(secrets.verify(Some(&secrets.sign(body)), body), Ok(()));
        let other = SigningSecrets::new(["stranger"]).sign(body);
        assert_eq!(
            secrets.verify(Some(&other), body),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            secrets.verify(Some(&by_old), br#"{"object_kind":"merge_request "}"#),
            Err(SignatureError::Mismatch),
            "a body changed in transit"
        );
        assert_eq!(
            secrets.verify(Some("zz"), body),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(secrets.verify(None, body), Err(SignatureError::Missing));
        assert!(!format!("{secrets:?}").contains("old-secret"));
    }

    #[test]
    fn no_token_configured_refuses_everything() {
        let none = HookTokens::new([""]);
        assert_eq!(none.verify(Some("")), Err(TokenError::Missing));
        assert_eq!(none.verify(Some("anything")), Err(TokenError::Mismatch));
    }
}
