//! The differential flame graph: inferno's differential folding of base then head, drawn with
//! head's widths and coloured by each frame's change (red grew, blue shrank).

use inferno::differential;
use inferno::flamegraph;

use crate::error::ProfileError;
use crate::folded::Folded;

/// The differential flame graph (inferno's differential mode: base then head, coloured by
/// change), as SVG text, with `title`.
///
/// Base is normalised to head's total, so colours show shares that moved, not a head that ran
/// longer. Colours are deterministic, so the same profiles always draw the same SVG.
pub fn differential_svg(base: &Folded, head: &Folded, title: &str) -> Result<String, ProfileError> {
    if base.is_empty() && head.is_empty() {
        return Err(ProfileError::Empty);
    }
    let mut folded = Vec::new();
    let options = differential::Options {
        normalize: true,
        strip_hex: false,
    };
    let (base_text, head_text) = (base.to_text(), head.to_text());
    differential::from_readers(
        options,
        base_text.as_bytes(),
        head_text.as_bytes(),
        &mut folded,
    )
    .map_err(ProfileError::Render)?;
    let mut options = flamegraph::Options::default();
    options.title = title.to_owned();
    options.subtitle = Some("widths: head; red grew, blue shrank against base".to_owned());
    options.deterministic = true;
    options.hash = true;
    options.count_name = "samples".to_owned();
    let mut svg = Vec::new();
    flamegraph::from_reader(&mut options, folded.as_slice(), &mut svg)
        .map_err(ProfileError::Render)?;
    String::from_utf8(svg)
        .map_err(|e| ProfileError::Render(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}
