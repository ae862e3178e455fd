//! Linux CPU list syntax (`0-3,8,10-11`) as found in sysfs `cpulist` files.

use crate::error::{Result, TopologyError};

/// Parses a Linux CPU list; an empty (or all-blank) list is valid and empty.
///
/// # Errors
/// [`TopologyError::CpuList`] naming the text and the bad part.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// assert_eq!(zonal::topology::parse_cpulist("0-2,8\n")?, vec![0, 1, 2, 8]);
/// assert!(zonal::topology::parse_cpulist("3-1").is_err());
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn parse_cpulist(text: &str) -> Result<Vec<u32>> {
    let bad = |message: String| TopologyError::CpuList {
        text: text.trim().to_owned(),
        message,
    };
    let mut out = Vec::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|e| bad(format!("{s:?}: {e}")))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(format!("range {part:?} runs backwards")));
                }
                let len = (b - a) as usize + 1;
                if out.len().saturating_add(len) > crate::machine::MAX_CPUS {
                    return Err(bad(format!(
                        "range {part:?} takes the list past {} CPUs",
                        crate::machine::MAX_CPUS
                    )));
                }
                out.extend(a..=b);
            }
            None if out.len() >= crate::machine::MAX_CPUS => {
                return Err(bad(format!("more than {} CPUs", crate::machine::MAX_CPUS)));
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Writes indexes in Linux's list syntax, runs compressed: the inverse of [`parse_cpulist`].
/// The input need not be sorted; repeats are dropped. An empty list gives an empty string.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// assert_eq!(zonal::topology::format_cpulist(&[8, 0, 1, 2, 10, 11]), "0-2,8,10-11");
/// assert_eq!(zonal::topology::format_cpulist(&[]), "");
/// ```
#[must_use]
pub fn format_cpulist(ids: &[u32]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            end += 1;
            i += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(parse_cpulist("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_cpulist(" 5 ").unwrap(), vec![5]);
        assert_eq!(parse_cpulist("0-1,4-5").unwrap(), vec![0, 1, 4, 5]);
        assert!(parse_cpulist("a").is_err());
        assert!(parse_cpulist("1-").is_err());
    }

    #[test]
    fn formats_runs() {
        assert_eq!(format_cpulist(&[0, 1, 4, 5, 6, 9]), "0-1,4-6,9");
        assert_eq!(
            format_cpulist(&[u32::MAX, u32::MAX - 1]),
            "4294967294-4294967295"
        );
        assert_eq!(format_cpulist(&[3, 3]), "3");
    }
}
