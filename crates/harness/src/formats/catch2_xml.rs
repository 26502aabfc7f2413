//! Catch2's XML reporter (`-r xml`), v2 (`<Catch>`) and v3 (`<Catch2TestRun>`):
//!
//! ```xml
//! <TestCase name="Fibonacci">
//!   <BenchmarkResults name="Fibonacci 20" samples="100" iterations="2" …>
//!     <mean value="41731" lowerBound="41250" upperBound="42622" ci="0.95"/>
//! ```
//!
//! All values are in nanoseconds. Each benchmark gives one `time` measurement: the mean,
//! bounded by its interval, named `test case / sections / benchmark` as the console parser does.

use benchgate_api::Direction;
use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use super::units::{self, number};
use super::{Format, Measurement, ParseError, metric, unit};

/// Parse Catch2 XML output.
pub(crate) fn parse(text: &str) -> Result<Vec<Measurement>, ParseError> {
    let mut reader = Reader::from_str(text);
    let mut out = Vec::new();
    // Names of the open TestCase and Section elements, outermost first.
    let mut scopes: Vec<String> = Vec::new();
    let mut benchmark: Option<(String, usize)> = None;
    let mut saw_root = false;
    loop {
        let at = reader.buffer_position() as usize;
        let event = reader
            .read_event()
            .map_err(|e| syntax_error(text, reader.error_position() as usize, &e.to_string()))?;
        match event {
            Event::Start(e) => {
                let tag = e.name().as_ref().to_string();
                saw_root |= matches!(tag.as_str(), "Catch" | "Catch2TestRun");
                match tag.as_str() {
                    "TestCase" | "Section" => scopes.push(attr(text, at, &e, "name")?),
                    "BenchmarkResults" => {
                        benchmark = Some((attr(text, at, &e, "name")?, at));
                    }
                    _ => {}
                }
            }
            Event::Empty(e) => match e.name().as_ref() {
                "mean" => {
                    let Some((name, _)) = &benchmark else {
                        continue;
                    };
                    let full = qualified(&scopes, name);
                    let value = number_attr(text, at, &e, "value")?;
                    if let Some(why) = units::implausible(value) {
                        return Err(error_at(text, at, &why));
                    }
                    let m = match (
                        optional_number(text, at, &e, "lowerBound")?,
                        optional_number(text, at, &e, "upperBound")?,
                    ) {
                        (Some(lo), Some(hi)) => {
                            units::bounded(&full, metric::TIME, unit::NS, (lo, value, hi))
                        }
                        _ => units::measurement(&full, metric::TIME, unit::NS, value),
                    };
                    out.push(m.with_direction(Direction::LowerIsBetter));
                    benchmark = None;
                }
                "BenchmarkResults" => {
                    return Err(error_at(
                        text,
                        at,
                        "expected a <mean> inside <BenchmarkResults>",
                    ));
                }
                _ => {}
            },
            Event::End(e) => match e.name().as_ref() {
                "TestCase" | "Section" => {
                    scopes.pop();
                }
                "BenchmarkResults" => {
                    if let Some((name, start)) = benchmark.take() {
                        return Err(error_at(
                            text,
                            start,
                            &format!("expected a <mean> inside <BenchmarkResults name=\"{name}\">"),
                        ));
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root {
        return Err(error_at(
            text,
            0,
            "expected Catch2 XML (a <Catch2TestRun> or <Catch> root element)",
        ));
    }
    Ok(out)
}

fn qualified(scopes: &[String], name: &str) -> String {
    let mut parts: Vec<&str> = scopes.iter().map(|s| s.trim()).collect();
    parts.push(name.trim());
    parts.join(" / ")
}

fn attr(text: &str, at: usize, e: &BytesStart<'_>, key: &str) -> Result<String, ParseError> {
    optional_attr(text, at, e, key)?.ok_or_else(|| {
        let tag = e.name().as_ref().to_string();
        error_at(text, at, &format!("expected attribute `{key}` on <{tag}>"))
    })
}

fn optional_attr(
    text: &str,
    at: usize,
    e: &BytesStart<'_>,
    key: &str,
) -> Result<Option<String>, ParseError> {
    let found = e.try_get_attribute(key).map_err(|err| {
        error_at(
            text,
            at,
            &format!("expected well-formed attributes ({err})"),
        )
    })?;
    match found {
        None => Ok(None),
        Some(a) => a
            .normalized_value(XmlVersion::Implicit1_0)
            .map(|v| Some(v.into_owned()))
            .map_err(|err| {
                error_at(
                    text,
                    at,
                    &format!("expected a valid attribute value ({err})"),
                )
            }),
    }
}

fn optional_number(
    text: &str,
    at: usize,
    e: &BytesStart<'_>,
    key: &str,
) -> Result<Option<f64>, ParseError> {
    match optional_attr(text, at, e, key)? {
        None => Ok(None),
        Some(v) => number(&v).map(Some).ok_or_else(|| {
            error_at(
                text,
                at,
                &format!("expected a number in `{key}`, found {v:?}"),
            )
        }),
    }
}

fn number_attr(text: &str, at: usize, e: &BytesStart<'_>, key: &str) -> Result<f64, ParseError> {
    optional_number(text, at, e, key)?.ok_or_else(|| {
        let tag = e.name().as_ref().to_string();
        error_at(text, at, &format!("expected attribute `{key}` on <{tag}>"))
    })
}

/// An error at a byte offset, turned into line and column.
fn error_at(text: &str, offset: usize, message: &str) -> ParseError {
    let offset = offset.min(text.len());
    // Back off to a character boundary: quick-xml's positions are byte offsets.
    let offset = (0..=offset)
        .rev()
        .find(|&o| text.is_char_boundary(o))
        .unwrap_or(0);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ParseError::at_line(Format::Catch2, line, Some(column), message)
}

fn syntax_error(text: &str, offset: usize, detail: &str) -> ParseError {
    error_at(
        text,
        offset,
        &format!("expected well-formed XML ({detail})"),
    )
}
