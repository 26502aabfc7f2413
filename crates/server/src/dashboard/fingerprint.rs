//! A runner's machine fingerprint in words and units: the agent sends the harness's
//! `MachineFingerprint` as JSON; a person reads "unknown", "23.54 GiB" and "load 0.52 / 0.61 / 0.70".

use serde_json::Value;

/// The keys of `MachineFingerprint` in the order a reader wants them.
const KNOWN: [&str; 9] = [
    "cpu_model",
    "logical_cores",
    "physical_cores",
    "memory_bytes",
    "kernel",
    "governor",
    "boost",
    "load_average",
    "isolation",
];

/// The fingerprint as (label, value) lines: the known keys in [`KNOWN`]'s order, then any
/// other key (from a newer agent) under its own name.
pub fn lines(fingerprint: Option<&Value>) -> Vec<(String, String)> {
    match fingerprint {
        Some(Value::Object(map)) => {
            let known = KNOWN.iter().filter_map(|k| map.get(*k).map(|v| line(k, v)));
            let others = map
                .iter()
                .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
                .map(|(k, v)| line(k, v));
            known.chain(others).collect()
        }
        Some(other) => vec![("fingerprint".into(), words(other))],
        None => Vec::new(),
    }
}

/// One key's label and its value in words.
fn line(key: &str, v: &Value) -> (String, String) {
    let (label, text) = match (key, v) {
        ("cpu_model", _) => ("CPU", words(v)),
        ("logical_cores", _) => ("logical cores", words(v)),
        ("physical_cores", _) => ("physical cores", words(v)),
        ("governor", _) => ("frequency governor", words(v)),
        ("boost", Value::Bool(on)) => ("boost (turbo)", if *on { "on" } else { "off" }.into()),
        ("boost", _) => ("boost (turbo)", words(v)),
        ("memory_bytes", Value::Number(n)) => (
            "memory",
            benchgate_stats::words::value(n.as_f64().unwrap_or(0.0), "bytes"),
        ),
        ("load_average", Value::Array(loads)) => ("load average", load(loads)),
        ("isolation", _) => ("sandbox", words(v)),
        (other, _) => return (other.to_owned(), words(v)),
    };
    (label.to_owned(), text)
}

/// `load 0.52 / 0.61 / 0.70 (1, 5, 15 min)`.
fn load(loads: &[Value]) -> String {
    let parts: Vec<String> = loads
        .iter()
        .map(|l| l.as_f64().map_or_else(|| words(l), |l| format!("{l:.2}")))
        .collect();
    let minutes = if parts.len() == 3 {
        " (1, 5, 15 min)"
    } else {
        ""
    };
    format!("load {}{minutes}", parts.join(" / "))
}

/// Any value as a person reads it: `null` is "unknown" (the machine did not expose it).
fn words(v: &Value) -> String {
    match v {
        Value::Null => "unknown".into(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(words).collect::<Vec<_>>().join(" / "),
        other => other.to_string(),
    }
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
            "isolation": "bwrap"
        });
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
        assert_eq!(lines[0], ("CPU".into(), "AMD EPYC 7B13".into()));
    }

    #[test]
    fn unknown_keys_keep_their_name() {
        let f = serde_json::json!({"smt": "off", "boost": true});
        assert_eq!(
            lines(Some(&f)),
            [
                ("boost (turbo)".into(), "on".into()),
                ("smt".into(), "off".into())
            ]
        );
    }
}
