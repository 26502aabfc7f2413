//! `X-Hub-Signature-256` verification: HMAC-SHA256 of the raw request body, checked in constant
//! time against every configured secret so a secret can be rotated without dropping deliveries.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The header GitHub puts the SHA-256 signature in.
pub const SIGNATURE_HEADER: &str = "X-Hub-Signature-256";

const PREFIX: &str = "sha256=";
/// A SHA-256 digest is 32 bytes, 64 hex digits.
const DIGEST_HEX_LEN: usize = 64;

/// One or more webhook secrets; a delivery signed with any of them is accepted (rotation).
/// `Debug` never shows the values.
#[derive(Clone)]
pub struct WebhookSecrets(Vec<Vec<u8>>);

/// Why a delivery's signature was rejected. Every variant means "answer 401, do nothing".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The request carried no `X-Hub-Signature-256` header.
    #[error("missing X-Hub-Signature-256 header")]
    Missing,
    /// The header does not start with `sha256=`.
    #[error("X-Hub-Signature-256 must start with \"sha256=\"")]
    WrongPrefix,
    /// The part after `sha256=` is not 64 hex digits.
    #[error("X-Hub-Signature-256 is not 64 hex digits after \"sha256=\"")]
    MalformedHex,
    /// Well-formed, but no configured secret produces it.
    #[error("X-Hub-Signature-256 does not match the body under any configured secret")]
    Mismatch,
}

/// A secret list that would accept nothing or accept everything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretsError {
    /// No secret given: verification could never succeed, so refuse to start instead.
    #[error("no webhook secret configured")]
    Empty,
    /// An empty secret makes the HMAC trivially forgeable by anyone who guesses it.
    #[error("webhook secret number {position} is empty")]
    EmptySecret {
        /// 1-based position in the list.
        position: usize,
    },
}

impl WebhookSecrets {
    /// Secrets in order of preference (the current one first); none may be empty.
    pub fn new<I, S>(secrets: I) -> Result<Self, SecretsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let secrets: Vec<Vec<u8>> = secrets.into_iter().map(|s| s.as_ref().to_vec()).collect();
        if secrets.is_empty() {
            return Err(SecretsError::Empty);
        }
        if let Some(i) = secrets.iter().position(Vec::is_empty) {
            return Err(SecretsError::EmptySecret { position: i + 1 });
        }
        Ok(Self(secrets))
    }

    /// Parses the comma-separated form of `BENCHGATE_WEBHOOK_SECRET`; blanks around commas are trimmed.
    pub fn from_comma_separated(value: &str) -> Result<Self, SecretsError> {
        if value.trim().is_empty() {
            return Err(SecretsError::Empty);
        }
        Self::new(value.split(',').map(str::trim))
    }

    /// How many secrets are accepted.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: construction refuses an empty list. Present for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Checks `header` (the value of `X-Hub-Signature-256`, if present) against `body`, the raw
    /// bytes exactly as received. Comparison is constant-time per secret.
    pub fn verify(&self, header: Option<&str>, body: &[u8]) -> Result<(), SignatureError> {
        let header = header.ok_or(SignatureError::Missing)?.trim();
        let hex_digest = header
            .strip_prefix(PREFIX)
            .ok_or(SignatureError::WrongPrefix)?;
        if hex_digest.len() != DIGEST_HEX_LEN {
            return Err(SignatureError::MalformedHex);
        }
        let expected = hex::decode(hex_digest).map_err(|_| SignatureError::MalformedHex)?;
        // Try every secret even after a match would be found, so timing does not reveal which
        // secret (old or new) signed the delivery.
        let mut matched = false;
        for secret in &self.0 {
            let mut mac = hmac_for(secret);
            mac.update(body);
            matched |= mac.verify_slice(&expected).is_ok();
        }
        if matched {
            Ok(())
        } else {
            Err(SignatureError::Mismatch)
        }
    }

    /// The header value GitHub would send for `body` under the first secret (for tests and
    /// tools that replay deliveries).
    pub fn sign(&self, body: &[u8]) -> String {
        sign_with(&self.0[0], body)
    }
}

/// `sha256=<hex>` for `body` under `secret`, as GitHub computes it.
pub fn sign_with(secret: &[u8], body: &[u8]) -> String {
    let mut mac = hmac_for(secret);
    mac.update(body);
    format!("{PREFIX}{}", hex::encode(mac.finalize().into_bytes()))
}

fn hmac_for(secret: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length (long ones are hashed first), so this cannot fail.
    <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC accepts keys of any length")
}

impl fmt::Debug for WebhookSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "WebhookSecrets({} secret(s), values masked)",
            self.0.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC_SECRET: &str = "It's a Secret to Everybody";
    const DOC_PAYLOAD: &[u8] = b"Hello, World!";
    const DOC_SIG: &str = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    #[test]
    fn github_docs_vector_verifies() {
        let secrets = WebhookSecrets::new([DOC_SECRET]).unwrap();
        assert_eq!(secrets.verify(Some(DOC_SIG), DOC_PAYLOAD), Ok(()));
        assert_eq!(secrets.sign(DOC_PAYLOAD), DOC_SIG);
    }

    #[test]
    fn rejections_say_why() {
        let secrets = WebhookSecrets::new([DOC_SECRET]).unwrap();
        let wrong_digit = DOC_SIG.replace("757107", "757108");
        let cases: &[(Option<&str>, SignatureError)] = &[
            (None, SignatureError::Missing),
            (Some(""), SignatureError::WrongPrefix),
            (Some(&DOC_SIG[7..]), SignatureError::WrongPrefix),
            (
                Some("sha1=d03207e4b030cf234e3447bac4d93add4c6643d8"),
                SignatureError::WrongPrefix,
            ),
            (
                Some("SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"),
                SignatureError::WrongPrefix,
            ),
            (Some("sha256="), SignatureError::MalformedHex),
            (Some("sha256=757107"), SignatureError::MalformedHex),
            (
                Some("sha256=zz7107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"),
                SignatureError::MalformedHex,
            ),
            (Some(&wrong_digit), SignatureError::Mismatch),
        ];
        for (header, want) in cases {
            assert_eq!(
                secrets.verify(*header, DOC_PAYLOAD).as_ref(),
                Err(want),
                "header {header:?}"
            );
        }
        // Right signature, body changed by one byte.
        assert_eq!(
            secrets.verify(Some(DOC_SIG), b"Hello, World?"),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn any_configured_secret_is_accepted_during_rotation() {
        let secrets =
            WebhookSecrets::from_comma_separated("new-secret, It's a Secret to Everybody").unwrap();
        assert_eq!(secrets.len(), 2);
        assert_eq!(secrets.verify(Some(DOC_SIG), DOC_PAYLOAD), Ok(()));
        let only_new = WebhookSecrets::new(["new-secret"]).unwrap();
        assert_eq!(
            only_new.verify(Some(DOC_SIG), DOC_PAYLOAD),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn empty_secret_lists_are_refused() {
        assert_eq!(
            WebhookSecrets::from_comma_separated("  ").unwrap_err(),
            SecretsError::Empty
        );
        assert_eq!(
            WebhookSecrets::new(Vec::<&str>::new()).unwrap_err(),
            SecretsError::Empty
        );
        assert_eq!(
            WebhookSecrets::from_comma_separated("a,,b").unwrap_err(),
            SecretsError::EmptySecret { position: 2 }
        );
    }

    #[test]
    fn debug_masks_the_values() {
        let secrets = WebhookSecrets::new([DOC_SECRET, "hunter2"]).unwrap();
        let shown = format!("{secrets:?}");
        assert!(
            !shown.contains("Secret to") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(shown.contains("2 secret(s)"), "{shown}");
    }
}
