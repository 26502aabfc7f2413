//! The one error type of the parsers: which format, where, and what was expected.

use std::fmt;

use super::Format;

/// Where in the input a parser gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line, and a 1-based column (in characters) where it helps.
    Line { line: usize, column: Option<usize> },
    /// A JSON field, written as a path such as `benchmarks[2].real_time`.
    Field(String),
    /// A file read from disk (criterion's `target/criterion` tree).
    File(String),
    /// The input as a whole (empty, or of the wrong kind).
    Input,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line {
                line,
                column: Some(column),
            } => {
                write!(f, "line {line}, column {column}")
            }
            Location::Line { line, column: None } => write!(f, "line {line}"),
            Location::Field(path) => write!(f, "field `{path}`"),
            Location::File(path) => write!(f, "file `{path}`"),
            Location::Input => f.write_str("input"),
        }
    }
}

/// Why a harness's output could not be turned into measurements.
///
/// Displays as `go output, line 3, column 14: expected a number before `ns/op`, found "x"`;
/// a failed detection as `no known format (--format auto), input: …`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}, {location}: {message}", subject(*format))]
pub struct ParseError {
    /// The format being parsed (never `Auto`: detection names the format it tried, or `auto`
    /// when nothing matched).
    pub format: Format,
    /// Where the problem is.
    pub location: Location,
    /// What was expected, and what was found instead.
    pub message: String,
}

/// What the message is about: the named format's output, or detection that found none.
fn subject(format: Format) -> String {
    match format {
        Format::Auto => "no known format (--format auto)".to_owned(),
        f => format!("{f} output"),
    }
}

impl ParseError {
    /// An error at an arbitrary location.
    pub fn new(format: Format, location: Location, message: impl Into<String>) -> Self {
        ParseError {
            format,
            location,
            message: message.into(),
        }
    }

    /// An error on a 1-based line, optionally at a 1-based column.
    pub fn at_line(
        format: Format,
        line: usize,
        column: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(format, Location::Line { line, column }, message)
    }

    /// An error in a JSON field.
    pub fn at_field(format: Format, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(format, Location::Field(path.into()), message)
    }

    /// A JSON syntax error, located by serde_json's line and column.
    pub(crate) fn json_syntax(format: Format, err: &serde_json::Error) -> Self {
        let message = format!("expected valid JSON ({})", strip_position(&err.to_string()));
        Self::at_line(
            format,
            err.line().max(1),
            Some(err.column().max(1)),
            message,
        )
    }
}

/// serde_json appends " at line L column C" to its messages; the location already says that.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// The 1-based column (in characters) of `part` inside `line`, when `part` is a subslice of it.
pub(crate) fn column_of(line: &str, part: &str) -> Option<usize> {
    let start = line.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    if at < start || at > start + line.len() {
        return None;
    }
    let offset = at - start;
    line.get(..offset).map(|prefix| prefix.chars().count() + 1)
}
