//! Recognising benchstat's *summary* tables, so that they are refused with a clear reason.
//!
//! benchstat prints medians with confidence intervals computed from many runs; its output has
//! no samples left to pair, so benchgate cannot use it. Its *input* (raw `go test -bench`
//! output) parses with the `go` format.

use super::{Format, Location, ParseError};

/// Whether `text` looks like benchstat output rather than benchmark results: its table rules
/// (`│`), its CSV header (`,sec/op,CI,…`), or the old `name  old time/op  new time/op  delta`.
pub(crate) fn is_summary(text: &str) -> bool {
    text.lines().any(|line| {
        let trimmed = line.trim();
        trimmed.contains('\u{2502}')
            || (trimmed.starts_with(',') && trimmed.contains("/op"))
            || (trimmed.starts_with("name ") && trimmed.contains(" delta"))
    })
}

/// The error for benchstat summary output.
pub(crate) fn summary_error(format: Format) -> ParseError {
    ParseError::new(
        format,
        Location::Input,
        "this is benchstat summary output, not samples: give benchgate the raw \
         `go test -bench` output that benchstat was run on",
    )
}
