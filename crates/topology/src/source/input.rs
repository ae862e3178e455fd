//! Reading an input file safely: only regular files, only up to a size limit, and (for XML)
//! only up to a nesting depth, each checked before anything grows with the input and before
//! hwloc sees it.
//!
//! | limit | value | error |
//! |---|---|---|
//! | kind of file | regular files only (not a FIFO, device, socket or directory: a FIFO would block the reader forever) | [`TopologyError::NotAFile`] |
//! | size | [`MAX_INPUT_BYTES`] | [`TopologyError::TooLarge`] |
//! | XML element nesting | [`MAX_XML_DEPTH`] (a deeply nested file overflows the stack of hwloc's parser) | [`TopologyError::XmlTooDeep`] |
//!
//! The kind is checked on the opened file's metadata too: a path swapped for a FIFO between
//! the check and the open is refused before any read (the open itself of a FIFO without a
//! writer can still wait; the first check makes that a race, not a way in).

use std::io::Read;
use std::path::Path;

use crate::error::{Result, TopologyError};

/// The largest machine description read, bytes (64 MiB: hwloc's exports of 4,096-CPU
/// machines are a few MiB).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The deepest XML element nesting accepted (hwloc's exports nest about 10 deep).
pub const MAX_XML_DEPTH: usize = 256;

/// What kind of file `meta` describes, in words.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn check_kind(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(TopologyError::NotAFile {
            path: path.into(),
            kind: kind(meta),
        })
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TopologyError + '_ {
    move |source| TopologyError::Io {
        path: path.into(),
        source,
    }
}

/// Reads a regular file of at most [`MAX_INPUT_BYTES`].
///
/// # Errors
/// [`TopologyError::Io`], [`TopologyError::NotAFile`], [`TopologyError::TooLarge`].
pub(crate) fn read_regular(path: &Path) -> Result<Vec<u8>> {
    check_kind(path, &std::fs::metadata(path).map_err(io(path))?)?;
    let file = std::fs::File::open(path).map_err(io(path))?;
    let meta = file.metadata().map_err(io(path))?;
    check_kind(path, &meta)?;
    let too_large = |bytes: u64| TopologyError::TooLarge {
        path: path.into(),
        bytes,
        limit: MAX_INPUT_BYTES,
    };
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reads a regular UTF-8 text file of at most [`MAX_INPUT_BYTES`].
///
/// # Errors
/// As [`read_regular`], and [`TopologyError::Io`] (invalid data) for text that is not UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read_regular(path)?).map_err(|e| TopologyError::Io {
        path: path.into(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })
}

/// The deepest element nesting of an XML document, counted on its tags (`<a>` opens, `</a>`
/// and `<a/>` close; declarations, comments and processing instructions do not count). A
/// rough count, enough to refuse a document before a recursive parser sees it.
#[cfg_attr(not(feature = "hwloc"), allow(dead_code))]
pub(crate) fn xml_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|&b| b == b'<') {
        let start = i + off;
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(bytes.len(), |e| start + e);
        let tag = &bytes[start + 1..end.min(bytes.len())];
        match tag.first() {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(b'?' | b'!') | None => {}
            Some(_) if tag.last() == Some(&b'/') => {}
            Some(_) => {
                depth += 1;
                max = max.max(depth);
            }
        }
        i = end.saturating_add(1).min(bytes.len());
        if i >= bytes.len() {
            break;
        }
    }
    max
}

/// Refuses an XML document nested deeper than [`MAX_XML_DEPTH`].
///
/// # Errors
/// [`TopologyError::XmlTooDeep`].
#[cfg_attr(not(feature = "hwloc"), allow(dead_code))]
pub(crate) fn check_xml_depth(path: &Path, bytes: &[u8]) -> Result<()> {
    let depth = xml_depth(bytes);
    if depth > MAX_XML_DEPTH {
        return Err(TopologyError::XmlTooDeep {
            path: path.into(),
            depth,
            limit: MAX_XML_DEPTH,
        });
    }
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn depth_counts_elements_only() {
        assert_eq!(
            xml_depth(b"<?xml version=\"1.0\"?><!DOCTYPE t><a><b/><c><d></d></c></a>"),
            3
        );
        assert_eq!(xml_depth(b""), 0);
        assert_eq!(xml_depth(b"<a><b><c"), 3);
        let deep = "<a>".repeat(100_000);
        assert_eq!(xml_depth(deep.as_bytes()), 100_000);
    }

    #[test]
    fn directories_and_devices_are_refused_by_kind() {
        for (path, kind) in [("/", "a directory"), ("/dev/null", "a character device")] {
            match read_regular(Path::new(path)) {
                Err(TopologyError::NotAFile { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("{path}: {other:?}"),
            }
        }
    }
}
