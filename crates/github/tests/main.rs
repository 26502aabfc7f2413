//! The GitHub crate's integration tests, built as one test binary: each file beside this one is a
//! module, and `common` (fixtures, a fake GitHub, clients pointed at it) is compiled once. Run one
//! file's tests with `cargo test -p benchgate-github --test integration webhook_events::`.

mod common;

mod client_auth_errors;
mod client_calls;
mod client_comments;
mod client_compare;
mod manifest_conversion;
mod never_panic;
mod signature_vectors;
mod webhook_events;
