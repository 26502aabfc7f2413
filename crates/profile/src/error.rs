//! The one error type of the profile crate: which input line was bad, or which inferno step failed.

/// Why folded stacks could not be read, made or drawn.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// A line of folded stacks that is not `frame;frame;… COUNT`.
    #[error("folded stacks, line {line}: {reason}")]
    Parse { line: usize, reason: String },
    /// inferno's perf collapser failed on the `perf script` text.
    #[error("cannot collapse perf script output: {0}")]
    Collapse(std::io::Error),
    /// inferno could not draw the flame graph.
    #[error("cannot draw the flame graph: {0}")]
    Render(std::io::Error),
    /// Neither side has a sample, so there is nothing to draw.
    #[error("no samples on either side to draw")]
    Empty,
}
