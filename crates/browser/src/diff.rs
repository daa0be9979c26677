//! What changed: the lines of two snapshots that appeared (`+`) and disappeared (`-`), and
//! the share of pixels that differ between two PNG screenshots.

use similar::{ChangeTag, TextDiff};

const MAX_DIFF_LINES: usize = 200;

/// The changed lines of two snapshots, `None` when they are the same.
pub(crate) fn snapshot_diff(before: &str, after: &str) -> Option<String> {
    if before == after {
        return None;
    }
    let diff = TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    let mut total = 0;
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Equal => continue,
            ChangeTag::Insert => '+',
            ChangeTag::Delete => '-',
        };
        total += 1;
        if out.len() < MAX_DIFF_LINES {
            out.push(format!("{sign} {}", change.value().trim_end()));
        }
    }
    if total == 0 {
        return None;
    }
    let mut text = out.join("\n");
    if total > out.len() {
        text.push_str(&format!(
            "\n[{} more changed lines; take a browser_snapshot to see the whole page]",
            total - out.len()
        ));
    }
    Some(text)
}

fn decode(png_bytes: &[u8]) -> Result<(u32, u32, Vec<[u8; 4]>), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "the image is too large".to_string())?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|c| match channels {
            1 => [c[0], c[0], c[0], 255],
            2 => [c[0], c[0], c[0], c[1]],
            3 => [c[0], c[1], c[2], 255],
            _ => [c[0], c[1], c[2], c[3]],
        })
        .collect();
    Ok((info.width, info.height, pixels))
}

/// The share (0.0–1.0) of pixels that differ between two PNGs. Images of different sizes
/// differ entirely.
pub fn changed_share(a: &[u8], b: &[u8]) -> Result<f64, String> {
    let (wa, ha, pa) = decode(a)?;
    let (wb, hb, pb) = decode(b)?;
    if (wa, ha) != (wb, hb) || pa.is_empty() {
        return Ok(1.0);
    }
    let changed = pa.iter().zip(&pb).filter(|(x, y)| x != y).count();
    Ok(changed as f64 / pa.len() as f64)
}

/// The width and height of a PNG.
pub(crate) fn png_size(png_bytes: &[u8]) -> Option<(u32, u32)> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let reader = decoder.read_info().ok()?;
    let info = reader.info();
    Some((info.width, info.height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_lines_are_listed() {
        let d = snapshot_diff("a\nb\nc\n", "a\nB\nc\n").unwrap_or_default();
        assert_eq!(d, "- b\n+ B");
        assert_eq!(snapshot_diff("a\n", "a\n"), None);
    }
}
