//! A runner's machine fingerprint in words and units: a person reads "unknown", "23.54 GiB"
//! and "load 0.52 / 0.61 / 0.70".

use benchgate_api::MachineFingerprint;

/// The fingerprint as (label, value) lines, in the order a reader wants them; none without one.
pub fn lines(fingerprint: Option<&MachineFingerprint>) -> Vec<(String, String)> {
    let Some(f) = fingerprint else {
        return Vec::new();
    };
    let known = |v: Option<String>| v.unwrap_or_else(|| "unknown".into());
    let on_off = |b: bool| if b { "on" } else { "off" }.to_owned();
    [
        ("CPU", known(f.cpu_model.clone())),
        ("logical cores", f.logical_cores.to_string()),
        (
            "physical cores",
            known(f.physical_cores.map(|p| p.to_string())),
        ),
        (
            "memory",
            benchgate_stats::words::value(f.memory_bytes as f64, "bytes"),
        ),
        ("kernel", f.kernel.clone()),
        ("frequency governor", known(f.governor.clone())),
        ("boost (turbo)", known(f.boost.map(on_off))),
        ("load average", load(&f.load_average)),
        ("sandbox", known(f.isolation.clone())),
        (
            "instruction counter",
            match f.counter.as_deref() {
                Some(benchgate_api::fingerprint::NO_COUNTER) => {
                    "none: suites with `counts` fail here (install valgrind)".to_owned()
                }
                Some(c) => c.to_owned(),
                None => "not reported".to_owned(),
            },
        ),
    ]
    .into_iter()
    .map(|(label, text)| (label.to_owned(), text))
    .collect()
}

/// `load 0.52 / 0.61 / 0.70 (1, 5, 15 min)`.
fn load(loads: &[f64; 3]) -> String {
    let parts: Vec<String> = loads.iter().map(|l| format!("{l:.2}")).collect();
    format!("load {} (1, 5, 15 min)", parts.join(" / "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_fingerprint_reads_in_words_and_units() {
        // What an agent on a 2-core VM sent (the harness's MachineFingerprint).
        let f = serde_json::json!({
            "cpu_model": "AMD EPYC 7B13", "logical_cores": 2, "physical_cores": null,
            "kernel": "Linux 6.1.0-18-amd64", "governor": null, "boost": null,
            "memory_bytes": 25276502016u64, "load_average": [0.52, 0.61, 0.7],
            "isolation": "bwrap", "counter": "valgrind cachegrind"
        });
        let f: MachineFingerprint = serde_json::from_value(f).unwrap();
        let lines = lines(Some(&f));
        let get = |label: &str| {
            lines
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no {label}: {lines:?}"))
        };
        assert_eq!(get("frequency governor"), "unknown");
        assert_eq!(get("boost (turbo)"), "unknown");
        assert_eq!(get("physical cores"), "unknown");
        assert_eq!(get("memory"), "23.54 GiB");
        assert_eq!(
            get("load average"),
            "load 0.52 / 0.61 / 0.70 (1, 5, 15 min)"
        );
        assert_eq!(get("sandbox"), "bwrap");
        assert_eq!(get("instruction counter"), "valgrind cachegrind");
        assert_eq!(lines[0], ("CPU".into(), "AMD EPYC 7B13".into()));
    }
}
