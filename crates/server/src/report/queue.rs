//! A queued comparison's place in words, for the comment's status line and the check's title:
//! "queued: 3rd in line for `linux-x64` (~6 min of work ahead), an answer expected in ~11 min".

use crate::queue_wait::{QueueWait, WaitTime};

/// Below this wait a runner is as good as free: no work ahead to speak of.
const NO_WAIT_SECS: f64 = 30.0;

/// The place and the time, the label written by `label` (a code span in the comment, plain in
/// the check's title).
pub(super) fn queue_words(wait: &QueueWait, label: impl Fn(&str) -> String) -> String {
    let place = format!(
        "queued: {} in line for {}",
        ordinal(wait.place),
        label(&wait.label)
    );
    match wait.time {
        WaitTime::NoRunner => format!("{place}; no runner of {} is online", label(&wait.label)),
        WaitTime::NoPace => format!("{place}; no pace measured yet"),
        WaitTime::Known {
            start_secs,
            answer_secs,
        } => {
            let ahead = if start_secs < NO_WAIT_SECS {
                "no work ahead".to_owned()
            } else {
                format!("~{} of work ahead", minutes(start_secs))
            };
            match answer_secs {
                Some(answer) => format!(
                    "{place} ({ahead}), an answer expected in ~{}",
                    minutes(answer)
                ),
                None => format!("{place} ({ahead}); no pace measured yet for its own rounds"),
            }
        }
    }
}

/// "1st", "2nd", "3rd", "4th", "11th", "22nd".
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A wait in whole minutes (never "0 min"), or hours and minutes past two hours: a forecast
/// from planned rounds is no more precise than that.
fn minutes(secs: f64) -> String {
    let m = (secs / 60.0).round().max(1.0) as u64;
    if m < 120 {
        format!("{m} min")
    } else {
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(place: usize, time: WaitTime) -> QueueWait {
        QueueWait {
            place,
            label: "linux-x64".to_owned(),
            time,
        }
    }

    #[test]
    fn the_place_and_the_minutes_read_as_a_sentence() {
        let code = |l: &str| format!("`{l}`");
        let known = |start_secs, answer_secs| WaitTime::Known {
            start_secs,
            answer_secs,
        };
        let cases = [
            (
                wait(3, known(347.0, Some(660.0))),
                "queued: 3rd in line for `linux-x64` (~6 min of work ahead), an answer expected in ~11 min",
            ),
            (
                wait(1, known(0.0, Some(20.0))),
                "queued: 1st in line for `linux-x64` (no work ahead), an answer expected in ~1 min",
            ),
            (
                wait(12, known(9000.0, Some(9600.0))),
                "queued: 12th in line for `linux-x64` (~2 h 30 min of work ahead), an answer expected in ~2 h 40 min",
            ),
            (
                wait(22, known(90.0, None)),
                "queued: 22nd in line for `linux-x64` (~2 min of work ahead); no pace measured yet for its own rounds",
            ),
            (
                wait(3, WaitTime::NoPace),
                "queued: 3rd in line for `linux-x64`; no pace measured yet",
            ),
            (
                wait(2, WaitTime::NoRunner),
                "queued: 2nd in line for `linux-x64`; no runner of `linux-x64` is online",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(queue_words(&input, code), want);
        }
    }
}
