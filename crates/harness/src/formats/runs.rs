//! Where one process's output ends and the next begins, in an output appended from several
//! (`for i in 1..5: go test -bench . >> old.txt`). A run is a process, and most formats show
//! where one starts; each format's rule is in [`process_rule`], the one list the docs and
//! `analyze --help` quote. Measurements get their run ([`Measurement::run`]) only when the
//! output holds more than one process: `compare` and the agent read one process's output at a
//! time and average it whatever the tags, so only `analyze` sees the difference.

use std::collections::HashSet;

use super::{Format, Measurement};

/// How `format`'s output shows where a process starts, in words (docs/configuration.md,
/// "Recording runs for analyze").
pub fn process_rule(format: Format) -> &'static str {
    match format {
        Format::Go => "a `goos:`/`pkg:` header after results starts the next process",
        Format::Raw => "every line is one run (a whole-program time)",
        Format::Google => "every JSON document (with its `context`) is one process",
        Format::Pytest => "every JSON document is one process",
        Format::Criterion | Format::Libtest | Format::Catch2 | Format::Divan | Format::Gungraun => {
            "a benchmark printed again starts the next process (each process prints each \
             benchmark once)"
        }
        Format::Hyperfine => "every run hyperfine made",
        Format::Jmh => "every fork (JSON); the text table is one summary",
        Format::Pyperf => "every run (worker process)",
        Format::Dotnet => "every launch",
        Format::Bmf => "one file is one run",
        Format::Auto | Format::Command => "",
    }
}

/// Tags the measurements of one parsed output by process where `format` marks processes by a
/// benchmark printed again ([`process_rule`]); other formats tag in their parsers.
pub(crate) fn by_repeats(format: Format, measurements: Vec<Measurement>) -> Vec<Measurement> {
    let repeats_mark_processes = matches!(
        format,
        Format::Criterion | Format::Libtest | Format::Catch2 | Format::Divan | Format::Gungraun
    );
    if !repeats_mark_processes || measurements.iter().any(|m| m.run.is_some()) {
        return measurements;
    }
    let mut runs = ProcessRuns::default();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let tagged = measurements
        .into_iter()
        .map(|m| {
            if !seen.insert((m.benchmark.clone(), m.metric.clone())) {
                runs.start();
                seen.clear();
                seen.insert((m.benchmark.clone(), m.metric.clone()));
            }
            runs.tag(m)
        })
        .collect();
    runs.finish(tagged)
}

/// Counts processes while a parser reads an appended output: [`ProcessRuns::start`] at a line
/// its format prints first in every process, [`ProcessRuns::tag`] on every measurement, and
/// [`ProcessRuns::finish`] at the end.
#[derive(Debug, Default)]
pub(crate) struct ProcessRuns {
    run: u32,
    measured: bool,
}

impl ProcessRuns {
    /// A process starts here: the next measurement belongs to a new run, unless nothing was
    /// measured since the last start (a header of several lines, an empty process).
    pub(crate) fn start(&mut self) {
        if self.measured {
            self.run += 1;
            self.measured = false;
        }
    }

    /// `m` in the current run.
    pub(crate) fn tag(&mut self, m: Measurement) -> Measurement {
        self.measured = true;
        m.in_run(self.run)
    }

    /// The measurements, untagged when they came from one process (so an output of one process
    /// reads exactly as before).
    pub(crate) fn finish(&self, mut measurements: Vec<Measurement>) -> Vec<Measurement> {
        if self.run == 0 {
            for m in &mut measurements {
                m.run = None;
            }
        }
        measurements
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, value: f64) -> Measurement {
        Measurement::new(name, "time", "ns", value)
    }

    #[test]
    fn a_benchmark_printed_again_starts_the_next_process() {
        let ms = vec![
            m("a", 1.0),
            m("b", 2.0),
            m("a", 3.0),
            m("b", 4.0),
            m("a", 5.0),
        ];
        let runs: Vec<Option<u32>> = by_repeats(Format::Criterion, ms)
            .iter()
            .map(|m| m.run)
            .collect();
        assert_eq!(runs, [Some(0), Some(0), Some(1), Some(1), Some(2)]);
    }

    #[test]
    fn one_process_stays_untagged_and_go_repeats_are_one_process() {
        let once = by_repeats(Format::Criterion, vec![m("a", 1.0), m("b", 2.0)]);
        assert!(once.iter().all(|m| m.run.is_none()));
        // `go test -count=2` repeats a benchmark inside one process: go marks processes by
        // their header instead.
        let go = by_repeats(Format::Go, vec![m("a", 1.0), m("a", 2.0)]);
        assert!(go.iter().all(|m| m.run.is_none()));
    }

    #[test]
    fn every_format_that_reads_files_says_what_a_run_is() {
        for f in Format::ALL {
            if !matches!(f, Format::Auto | Format::Command) {
                assert!(!process_rule(f).is_empty(), "{f}");
            }
        }
    }
}
