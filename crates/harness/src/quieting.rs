//! Optional measures that make a machine quieter for a run. Each one is recorded with the
//! samples, because a reader comparing two sessions must know which were in force.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Which quieting measures apply to every run of a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Quieting {
    /// Pin each benchmarked process to these logical CPUs (`sched_setaffinity`); empty: no pinning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<usize>,
    /// Run the process with `personality(ADDR_NO_RANDOMIZE)`, so layout luck is the same each run.
    #[serde(default)]
    pub disable_aslr: bool,
    /// Before each round, wait until the 1-minute load average is below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_load: Option<f64>,
}

/// What waiting for a quiet machine achieved before one round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadWait {
    pub waited: Duration,
    /// The 1-minute load average when the round started.
    pub load: f64,
    /// Whether the load dropped under the limit (false: the wait gave up at its deadline).
    pub reached: bool,
}

/// A CPU list that is not of the form `0,2,4-7`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid CPU list {0:?}: expected numbers and ranges such as 0,2,4-7")]
pub struct InvalidCpuList(pub String);

/// Parses a CPU list as `taskset -c` writes it: `0,2,4-7`.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, InvalidCpuList> {
    let bad = || InvalidCpuList(text.to_owned());
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        match part.split_once('-') {
            Some((lo, hi)) => {
                let lo: usize = lo.trim().parse().map_err(|_| bad())?;
                let hi: usize = hi.trim().parse().map_err(|_| bad())?;
                if lo > hi {
                    return Err(bad());
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The 1-minute load average of this machine.
pub fn load_average_1m() -> f64 {
    let info = rustix::system::sysinfo();
    // The kernel reports loads in fixed point with 16 fractional bits (SI_LOAD_SHIFT).
    info.loads[0] as f64 / 65536.0
}

/// Sleeps until the 1-minute load average is under `limit`, or until `deadline` has passed.
pub fn wait_for_load(limit: f64, deadline: Duration) -> LoadWait {
    let start = Instant::now();
    loop {
        let load = load_average_1m();
        if load < limit || start.elapsed() >= deadline {
            return LoadWait {
                waited: start.elapsed(),
                load,
                reached: load < limit,
            };
        }
        // The kernel recomputes load averages every 5 seconds; polling faster gains nothing.
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_taskset() {
        assert_eq!(parse_cpu_list("0,2,4-6").unwrap(), vec![0, 2, 4, 5, 6]);
        assert_eq!(parse_cpu_list("3").unwrap(), vec![3]);
        assert!(parse_cpu_list("2-1").is_err());
        assert!(parse_cpu_list("a").is_err());
    }

    #[test]
    fn a_generous_load_limit_is_reached_without_waiting() {
        let wait = wait_for_load(f64::MAX, Duration::ZERO);
        assert!(wait.reached);
    }
}
