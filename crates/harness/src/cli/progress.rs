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
    /// Where plain lines go: stderr, or a buffer in tests.
    out: Box<dyn Write + Send>,
    started: Instant,
    max_rounds: u64,
    last_line: Option<Instant>,
    multi: MultiProgress,
    rounds: ProgressBar,
    lines: Vec<ProgressBar>,
}

impl Progress {
    /// A display for up to `max_rounds` rounds, on stderr.
    pub fn new(max_rounds: u64, display: Display) -> Self {
        let target = if display == Display::Bar {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self::drawing_to(max_rounds, display, target, Box::new(std::io::stderr()))
    }

    /// A display whose bar draws to `target` and whose plain lines go to `out` (a terminal
    /// kept in memory and a buffer, in the snapshot tests).
    pub fn drawing_to(
        max_rounds: u64,
        display: Display,
        target: ProgressDrawTarget,
        out: Box<dyn Write + Send>,
    ) -> Self {
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
            out,
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

    fn print(&mut self, line: &str) {
        let _ = writeln!(self.out, "benchgate: {line}");
        let _ = self.out.flush();
    }

    /// Shows a phase that is not a round (building, warm-up).
    pub fn phase(&mut self, message: &str) {
        match self.display {
            Display::Bar => self.rounds.set_message(message.to_owned()),
            Display::Lines => {
                let line = format!(
                    "{message} ({})",
                    words::elapsed(self.elapsed().as_secs_f64())
                );
                self.print(&line);
            }
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
    use std::sync::{Arc, Mutex};

    fn policy() -> Policy {
        Policy {
            alpha: 0.05,
            n_star: 20.0,
            min_effect_pct: 1.0,
            tolerance: None,
            rules: Vec::new(),
            planned: Default::default(),
            assume_equal_spread: false,
            rare_slow_runs: None,
            gate_on: Default::default(),
        }
    }

    /// `parse` 50% slower and `emit` within ±1%: the state after each of `rounds` rounds.
    fn evaluations(rounds: usize) -> Vec<Evaluation> {
        let mut samples = PairedSamples::default();
        (0..rounds)
            .map(|i| {
                let wobble = if i % 2 == 0 { 1.01 } else { 0.99 };
                let m = |name: &str, v: f64| Measurement::new(name, "time", "ns", v);
                samples.push_round(
                    &[m("parse", 100.0), m("emit", 100.0 * wobble)],
                    &[m("parse", 150.0 * wobble), m("emit", 100.0 / wobble)],
                    i % 2 == 0,
                );
                evaluate(&samples, &policy(), &Default::default())
            })
            .collect()
    }

    #[test]
    fn a_plain_line_names_the_undecided_gated_benchmarks_and_the_time() {
        let eval = evaluations(12).pop().unwrap();
        assert_eq!(
            round_line(12, 50, Duration::from_millis(54_200), &eval),
            "round 12/50, 54.2 s: 1 slower, 1 no result yet; waiting for emit"
        );
    }

    /// A buffer the plain lines are written to.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Elapsed times vary from run to run; everything else must not.
    fn redact_times<F: FnOnce()>(check: F) {
        insta::with_settings!({filters => vec![(r"\d+\.\d s|\d+ min \d\d s", "[time]")]}, {
            check();
        });
    }

    #[test]
    fn on_a_terminal_the_bar_shows_the_phase_then_each_gated_row_and_leaves_nothing() {
        let term = indicatif::InMemoryTerm::new(8, 100);
        let target = ProgressDrawTarget::term_like(Box::new(term.clone()));
        let mut progress =
            Progress::drawing_to(50, Display::Bar, target, Box::new(std::io::sink()));
        progress.phase("building base 1234abcd");
        let building = term.contents();
        let evals = evaluations(12);
        progress.update(3, &evals[2]);
        let third = term.contents();
        progress.update(12, &evals[11]);
        let twelfth = term.contents();
        progress.finish();
        insta::assert_snapshot!("bar_building", building);
        insta::assert_snapshot!("bar_round_3", third);
        insta::assert_snapshot!("bar_round_12", twelfth);
        assert_eq!(
            term.contents().trim(),
            "",
            "the bar is cleared before the report"
        );
    }

    #[test]
    fn off_a_terminal_plain_lines_say_each_phase_and_the_rounds_with_the_time() {
        let lines = Lines::default();
        let mut progress = Progress::drawing_to(
            12,
            Display::Lines,
            ProgressDrawTarget::hidden(),
            Box::new(lines.clone()),
        );
        progress.phase("checking out base 1234abcd");
        progress.phase("building base 1234abcd");
        progress.phase("warming up");
        // Quicker than the line interval: the first round and the last are printed.
        for (k, eval) in evaluations(12).iter().enumerate() {
            progress.update(k as u64 + 1, eval);
        }
        progress.finish();
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        redact_times(|| insta::assert_snapshot!("plain_lines", text));
    }
}
