//! Markdown safety for the comment: cells and code spans that text from the benchmarked
//! program, the repository or a commenter cannot break. The encoders are
//! `benchgate_api::markdown`'s, the one place they are written (commands and claims quote
//! through them too). Words and numbers come from `benchgate_stats::words`, shared with the CLI
//! and the dashboard.

pub use benchgate_api::markdown::{cell, code, code_cell};
