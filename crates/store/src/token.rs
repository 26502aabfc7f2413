//! Runner tokens: 256 random bits shown once; only their SHA-256 is stored.

use crate::model::RunnerToken;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A fresh token: 32 random bytes as 64 hex digits.
pub(crate) fn generate() -> RunnerToken {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes[..]);
    RunnerToken::new(hex::encode(bytes))
}

/// The stored form of a token: hex SHA-256.
pub(crate) fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Compares two token hashes without leaking where they differ.
pub(crate) fn hashes_match(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}
