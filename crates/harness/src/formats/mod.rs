//! Parsers that turn a benchmark harness's output into measurements.
