//! What machine produced the samples: recorded with every session so a reader can tell whether
//! two numbers are comparable at all.

use std::fs;

pub use benchgate_api::fingerprint::MachineFingerprint;

/// Reads the fingerprint of this machine from `/proc`, `/sys` and `uname`.
pub fn current() -> MachineFingerprint {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let info = rustix::system::sysinfo();
    let uname = rustix::system::uname();
    let read = |path: &str| fs::read_to_string(path).ok().map(|s| s.trim().to_owned());
    MachineFingerprint {
        cpu_model: cpu_model(&cpuinfo),
        logical_cores: std::thread::available_parallelism().map_or(1, usize::from),
        physical_cores: physical_cores(&cpuinfo),
        kernel: format!(
            "{} {}",
            uname.sysname().to_string_lossy(),
            uname.release().to_string_lossy()
        ),
        governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        boost: boost_state(
            read("/sys/devices/system/cpu/cpufreq/boost").as_deref(),
            read("/sys/devices/system/cpu/intel_pstate/no_turbo").as_deref(),
        ),
        memory_bytes: info.totalram as u64 * u64::from(info.mem_unit),
        // Fixed point with 16 fractional bits (SI_LOAD_SHIFT).
        load_average: info.loads.map(|l| l as f64 / 65536.0),
        isolation: None,
        limits: None,
        counter: None,
    }
}

/// The first `model name` (x86) or `Model`/`CPU part` line of `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "cpu model"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
        })
    })
}

/// Distinct (physical id, core id) pairs; `None` where cpuinfo does not say (many ARM kernels).
fn physical_cores(cpuinfo: &str) -> Option<usize> {
    let mut cores = std::collections::BTreeSet::new();
    let mut package = None;
    for line in cpuinfo.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim() {
            "physical id" => package = Some(v.trim().to_owned()),
            "core id" => {
                cores.insert((package.clone(), v.trim().to_owned()));
            }
            _ => {}
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

/// Boost from `cpufreq/boost` (1 = on) or, on Intel, `intel_pstate/no_turbo` (1 = off).
fn boost_state(cpufreq_boost: Option<&str>, intel_no_turbo: Option<&str>) -> Option<bool> {
    match (cpufreq_boost, intel_no_turbo) {
        (Some(b), _) => Some(b == "1"),
        (None, Some(no_turbo)) => Some(no_turbo == "0"),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t\t: 0\n\n\
                           processor\t: 1\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t\t: 1\n\n\
                           processor\t: 2\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t\t: 1\n";

    #[test]
    fn reads_model_and_counts_physical_cores_once_per_core() {
        assert_eq!(cpu_model(CPUINFO).as_deref(), Some("AMD EPYC"));
        assert_eq!(physical_cores(CPUINFO), Some(2));
        assert_eq!(physical_cores("processor : 0\n"), None);
    }

    #[test]
    fn boost_reads_either_interface() {
        assert_eq!(boost_state(Some("1"), None), Some(true));
        assert_eq!(boost_state(None, Some("1")), Some(false));
        assert_eq!(boost_state(None, None), None);
    }

    #[test]
    fn current_machine_has_cores_memory_and_a_kernel() {
        let fp = current();
        assert!(fp.logical_cores >= 1 && fp.memory_bytes > 0);
        assert!(fp.kernel.starts_with("Linux"), "{}", fp.kernel);
        assert!(fp.summary().contains("logical cores"));
    }
}
