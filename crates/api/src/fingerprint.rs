//! What machine produced the samples: the agent reports it, the server stores it with the
//! runner, and it decides which runners' samples may be combined.

use serde::{Deserialize, Serialize};

/// The machine's identity as far as benchmark numbers depend on it. Fields that this machine
/// does not expose (a VM often hides the frequency governor) are `None`, never guessed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
// Every field defaults, so a fingerprint from an older or newer agent still reads.
#[serde(default)]
pub struct MachineFingerprint {
    pub cpu_model: Option<String>,
    pub logical_cores: usize,
    pub physical_cores: Option<usize>,
    pub kernel: String,
    pub governor: Option<String>,
    /// Whether frequency boost (turbo) is enabled.
    pub boost: Option<bool>,
    pub memory_bytes: u64,
    /// 1-, 5- and 15-minute load averages when the fingerprint was taken.
    pub load_average: [f64; 3],
    /// How the benchmarked code was isolated (`bwrap`, `none`); set by the agent, which knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// The resource limits of each build and run and how they are enforced (`cgroup v1: memory
    /// 18.0 GiB, 4096 processes; …`); set by the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<String>,
    /// The instruction counter of counted runs (`perf instructions:u`, `valgrind cachegrind`,
    /// or [`NO_COUNTER`]); set by the agent. Counts from two counters differ, so it is part of
    /// the hardware class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
}

/// [`MachineFingerprint::counter`] of a runner with neither a PMU perf can read nor Valgrind.
pub const NO_COUNTER: &str = "none";

impl MachineFingerprint {
    /// One line for reports: `AMD EPYC, 2 cores (2 physical), Linux 6.1, governor n/a`.
    pub fn summary(&self) -> String {
        let or_na = |v: &Option<String>| v.clone().unwrap_or_else(|| "n/a".into());
        let physical = self
            .physical_cores
            .map_or_else(|| "physical n/a".into(), |p| format!("{p} physical"));
        let boost = match self.boost {
            Some(true) => "on",
            Some(false) => "off",
            None => "n/a",
        };
        format!(
            "{}, {} logical cores ({physical}), {}, governor {}, boost {boost}, {:.1} GiB RAM, load {:.2}",
            or_na(&self.cpu_model),
            self.logical_cores,
            self.kernel,
            or_na(&self.governor),
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.load_average[0],
        )
    }

    /// The hardware class: CPU model, cores, kernel, governor, boost, memory (to the GiB) and
    /// isolation, but not the load. Runners of one class are combined; `None` (no CPU model)
    /// is never combined with anything.
    pub fn hardware_class(&self) -> Option<String> {
        let cpu = self.cpu_model.as_deref()?;
        let gib = (self.memory_bytes as f64 / f64::from(1u32 << 30)).round() as i64;
        Some(format!(
            "{cpu}|{}|{:?}|{}|{:?}|{:?}|{gib}|{:?}{}",
            self.logical_cores,
            self.physical_cores,
            self.kernel,
            self.governor,
            self.boost,
            self.isolation,
            // Absent for runners from before counters were reported: their class stays as it was.
            self.counter
                .as_deref()
                .map(|c| format!("|{c}"))
                .unwrap_or_default(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_never_splits_a_hardware_class_and_the_kernel_does() {
        let a = MachineFingerprint {
            cpu_model: Some("AMD EPYC 7B13".into()),
            logical_cores: 2,
            kernel: "Linux 6.1".into(),
            memory_bytes: 25_276_502_016,
            load_average: [0.5, 0.6, 0.7],
            ..Default::default()
        };
        let busier = MachineFingerprint {
            load_average: [3.0, 2.0, 1.0],
            ..a.clone()
        };
        let newer = MachineFingerprint {
            kernel: "Linux 6.12".into(),
            ..a.clone()
        };
        assert_eq!(a.hardware_class(), busier.hardware_class());
        assert_ne!(a.hardware_class(), newer.hardware_class());
        let unknown_cpu = MachineFingerprint {
            cpu_model: None,
            ..a
        };
        assert_eq!(unknown_cpu.hardware_class(), None);
    }

    #[test]
    fn a_fingerprint_missing_fields_or_with_new_ones_still_reads() {
        let f: MachineFingerprint =
            serde_json::from_value(serde_json::json!({"cpu_model": "x", "smt": "off"})).unwrap();
        assert_eq!(f.cpu_model.as_deref(), Some("x"));
        assert_eq!(f.logical_cores, 0);
    }
}
