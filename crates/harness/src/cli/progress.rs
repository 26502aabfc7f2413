//! The live display of `benchgate compare` on stderr: on a terminal, a bar of rounds and, per
//! gated benchmark, its current interval and verdict; off one (a CI log, a pipe), plain lines:
//! each phase, and the rounds at most every few seconds, with the elapsed time and what is
//! still undecided, so a log is never silent for minutes.

use std::io::Write;
use std::time::{Duration, Instant};

use benchgate_stats::words;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::render::live_line;
use crate::evaluate::{Evaluation, is_decided};

/// Least time between two plain round lines.
pub const LINE_INTERVAL: Duration = Duration::from_secs(5);

/// How the session shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// The bar and live rows, redrawn in place (stderr is a terminal).
    Bar,
    /// Plain lines (stderr is a file or pipe).
    Lines,
    /// Nothing (`--no-progress`).
    Hidden,
}

/// The progress display of one session.
pub struct Progress {
    display: Display,
    started: Instant,
    max_rounds: u64,
    last_line: Option<Instant>,
    multi: MultiProgress,
    rounds: ProgressBar,
    lines: Vec<ProgressBar>,
}

impl Progress {
    /// A display for up to `max_rounds` rounds.
    pub fn new(max_rounds: u64, display: Display) -> Self {
        let target = if display == Display::Bar {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let rounds = multi.add(ProgressBar::new(max_rounds));
        rounds.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} rounds {msg}")
                .expect("static template")
                .progress_chars("=> "),
        );
        rounds.set_prefix("benchgate");
        Progress {
            display,
            started: Instant::now(),
            max_rounds,
            last_line: None,
            multi,
            rounds,
            lines: Vec::new(),
        }
    }

    /// Time since the session started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn print(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "benchgate: {line}");
    }

    /// Shows a phase that is not a round (building, warm-up).
    pub fn phase(&self, message: &str) {
        match self.display {
            Display::Bar => self.rounds.set_message(message.to_owned()),
            Display::Lines => self.print(&format!(
                "{message} ({})",
                words::elapsed(self.elapsed().as_secs_f64())
            )),
            Display::Hidden => {}
        }
    }

    /// Shows the state after `done` measured rounds.
    pub fn update(&mut self, done: u64, eval: &Evaluation) {
        match self.display {
            Display::Bar => {
                self.rounds.set_position(done);
                self.rounds.set_message(String::new());
                for (i, row) in eval.results.iter().filter(|r| r.gated).enumerate() {
                    if i == self.lines.len() {
                        let line = self.multi.add(ProgressBar::new_spinner());
                        line.set_style(
                            ProgressStyle::with_template("  {msg}").expect("static template"),
                        );
                        self.lines.push(line);
                    }
                    self.lines[i].set_message(live_line(row));
                }
            }
            Display::Lines => {
                let due = self
                    .last_line
                    .is_none_or(|at| at.elapsed() >= LINE_INTERVAL);
                if due || done == self.max_rounds {
                    self.last_line = Some(Instant::now());
                    let line = round_line(done, self.max_rounds, self.elapsed(), eval);
                    self.print(&line);
                }
            }
            Display::Hidden => {}
        }
    }

    /// Removes the display before the report is printed.
    pub fn finish(self) {
        for line in &self.lines {
            line.finish_and_clear();
        }
        self.rounds.finish_and_clear();
        let _ = self.multi.clear();
    }
}

/// Names shown in a plain line before "and N more".
const NAMES_SHOWN: usize = 3;

/// `round 6/50, 54.2 s: 1 slower, 1 no result yet; waiting for parse`: the benchmarks counted
/// as the report counts them, and the gated ones the session still waits for.
pub fn round_line(done: u64, max: u64, elapsed: Duration, eval: &Evaluation) -> String {
    let mut seen = std::collections::HashSet::new();
    let open: Vec<&str> = eval
        .results
        .iter()
        .filter(|r| r.gated && !is_decided(r))
        .map(|r| r.name.as_str())
        .filter(|name| seen.insert(*name))
        .collect();
    let head = format!(
        "round {done}/{max}, {}: {}",
        words::elapsed(elapsed.as_secs_f64()),
        words::headline(&eval.results)
    );
    if open.is_empty() {
        return format!("{head} — every gated benchmark decided");
    }
    let mut names = open[..open.len().min(NAMES_SHOWN)].join(", ");
    if open.len() > NAMES_SHOWN {
        names.push_str(&format!(" and {} more", open.len() - NAMES_SHOWN));
    }
    format!("{head}; waiting for {names}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::{Policy, evaluate};
    use crate::samples::PairedSamples;
    use benchgate_api::Measurement;

    #[test]
    fn a_plain_line_names_the_undecided_gated_benchmarks_and_the_time() {
        let mut samples = PairedSamples::default();
        for i in 0..12 {
            let wobble = if i % 2 == 0 { 1.01 } else { 0.99 };
            let m = |name: &str, v: f64| Measurement::new(name, "time", "ns", v);
            samples.push_round(
                &[m("parse", 100.0), m("emit", 100.0 * wobble)],
                &[m("parse", 150.0 * wobble), m("emit", 100.0 / wobble)],
                i % 2 == 0,
            );
        }
        let policy = Policy {
            alpha: 0.05,
            n_star: 20.0,
            min_effect_pct: 1.0,
            rules: Vec::new(),
        };
        let eval = evaluate(&samples, &policy, &Default::default());
        assert_eq!(
            round_line(12, 50, Duration::from_millis(54_200), &eval),
            "round 12/50, 54.2 s: 1 slower, 1 no result yet; waiting for emit"
        );
    }
}
