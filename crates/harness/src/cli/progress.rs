//! The live display of `benchgate compare`: a bar of rounds and, per gated benchmark, its
//! current interval and verdict. Drawn on stderr, and only when stderr is a terminal.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::render::live_line;
use crate::evaluate::Evaluation;

/// The progress display of one session.
pub struct Progress {
    multi: MultiProgress,
    rounds: ProgressBar,
    lines: Vec<ProgressBar>,
}

impl Progress {
    /// A display for up to `max_rounds` rounds; hidden when `visible` is false.
    pub fn new(max_rounds: u64, visible: bool) -> Self {
        let target = if visible {
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
            multi,
            rounds,
            lines: Vec::new(),
        }
    }

    /// Shows a phase that is not a round (building, warm-up).
    pub fn phase(&self, message: &str) {
        self.rounds.set_message(message.to_owned());
    }

    /// Shows the state after `done` measured rounds.
    pub fn update(&mut self, done: u64, eval: &Evaluation) {
        self.rounds.set_position(done);
        self.rounds.set_message(String::new());
        for (i, row) in eval.results.iter().filter(|r| r.gated).enumerate() {
            if i == self.lines.len() {
                let line = self.multi.add(ProgressBar::new_spinner());
                line.set_style(ProgressStyle::with_template("  {msg}").expect("static template"));
                self.lines.push(line);
            }
            self.lines[i].set_message(live_line(row));
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
