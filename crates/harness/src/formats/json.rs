//! A JSON value with its path, so that every error names the field it is about.

use serde_json::Value;

use super::runs::ProcessRuns;
use super::{Format, Measurement, ParseError};

/// A node of a parsed JSON document and the path that led to it (`benchmarks[2].name`).
#[derive(Clone)]
pub(crate) struct Node<'a> {
    pub format: Format,
    pub value: &'a Value,
    path: String,
}

/// Parse `text` as JSON, reporting syntax errors by line and column.
pub(crate) fn parse(format: Format, text: &str) -> Result<Value, ParseError> {
    serde_json::from_str(text).map_err(|e| ParseError::json_syntax(format, &e))
}

/// The measurements of every JSON document of `text`, one after the other: the outputs of
/// several processes appended to one file (`--benchmark_out` of each run `>>` one file), one
/// run each. One document reads as one run, untagged.
pub(crate) fn each_document(
    format: Format,
    text: &str,
    parse_document: impl Fn(&Value) -> Result<Vec<Measurement>, ParseError>,
) -> Result<Vec<Measurement>, ParseError> {
    let mut runs = ProcessRuns::default();
    let mut out = Vec::new();
    for document in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let document = document.map_err(|e| ParseError::json_syntax(format, &e))?;
        runs.start();
        for m in parse_document(&document)? {
            out.push(runs.tag(m));
        }
    }
    Ok(runs.finish(out))
}

impl<'a> Node<'a> {
    /// The document root.
    pub fn root(format: Format, value: &'a Value) -> Self {
        Node {
            format,
            value,
            path: String::new(),
        }
    }

    /// The path of this node, e.g. `benchmarks[2].real_time` (`$` for the root).
    pub fn path(&self) -> &str {
        if self.path.is_empty() {
            "$"
        } else {
            &self.path
        }
    }

    /// An error about this node.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError::at_field(self.format, self.path(), message)
    }

    fn child(&self, value: &'a Value, step: String) -> Node<'a> {
        let path = if self.path.is_empty() || step.starts_with('[') {
            format!("{}{step}", self.path)
        } else {
            format!("{}.{step}", self.path)
        };
        Node {
            format: self.format,
            value,
            path,
        }
    }

    /// The member `key`, or an error saying it is missing.
    pub fn field(&self, key: &str) -> Result<Node<'a>, ParseError> {
        self.get(key)
            .ok_or_else(|| self.error(format!("expected a member `{key}`")))
    }

    /// The member `key` when present and not `null`.
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        let value = self.value.as_object()?.get(key)?;
        (!value.is_null()).then(|| self.child(value, key.to_string()))
    }

    /// The elements of an array, or an error.
    pub fn items(&self) -> Result<Vec<Node<'a>>, ParseError> {
        let array = self
            .value
            .as_array()
            .ok_or_else(|| self.error(format!("expected an array, found {}", kind(self.value))))?;
        Ok(array
            .iter()
            .enumerate()
            .map(|(i, value)| self.child(value, format!("[{i}]")))
            .collect())
    }

    /// The members of an object in document order, or an error.
    pub fn members(&self) -> Result<Vec<(&'a str, Node<'a>)>, ParseError> {
        let object = self
            .value
            .as_object()
            .ok_or_else(|| self.error(format!("expected an object, found {}", kind(self.value))))?;
        Ok(object
            .iter()
            .map(|(key, value)| (key.as_str(), self.child(value, key.clone())))
            .collect())
    }

    /// A finite number, or an error.
    pub fn number(&self) -> Result<f64, ParseError> {
        self.value
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| self.error(format!("expected a number, found {}", kind(self.value))))
    }

    /// A number a measurement can hold (finite, non-negative, at most 1e300), or an error
    /// naming this field.
    pub fn quantity(&self) -> Result<f64, ParseError> {
        let value = self.number()?;
        match super::units::implausible(value) {
            Some(why) => Err(self.error(why)),
            None => Ok(value),
        }
    }

    /// `value` (this field's number after a unit conversion) checked as [`Node::quantity`]
    /// does: a conversion can overflow a finite number.
    pub fn checked(&self, value: f64) -> Result<f64, ParseError> {
        match super::units::implausible(value) {
            Some(why) => Err(self.error(why)),
            None => Ok(value),
        }
    }

    /// A string, or an error.
    pub fn str(&self) -> Result<&'a str, ParseError> {
        self.value
            .as_str()
            .ok_or_else(|| self.error(format!("expected a string, found {}", kind(self.value))))
    }
}

/// What a JSON value is, for messages ("found a string").
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
