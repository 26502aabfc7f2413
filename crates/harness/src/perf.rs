//! Reading `perf stat -x,` output; [`crate::counter`] runs perf.

/// The count from `perf stat -x,` output: the first field of the `instructions` line, or `None`
/// when perf wrote `<not supported>` or `<not counted>`.
pub fn parse_instructions(csv: &str) -> Option<u64> {
    csv.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let event = fields.get(2)?;
            event
                .starts_with("instructions")
                .then(|| fields[0].trim().parse::<u64>().ok())
                .flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_count_and_refuses_unsupported() {
        assert_eq!(
            parse_instructions("# started on x\n\n1234567,,instructions:u,1000,100.00,,\n"),
            Some(1234567)
        );
        assert_eq!(
            parse_instructions("<not supported>,,instructions,0,100.00,,"),
            None
        );
        assert_eq!(parse_instructions(""), None);
    }
}
