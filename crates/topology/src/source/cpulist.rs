//! Linux CPU list syntax (`0-3,8,10-11`) as found in sysfs `cpulist` files.

use crate::error::{Result, TopologyError};

/// Parses a Linux CPU list; an empty (or all-blank) list is valid and empty.
///
/// # Errors
/// [`TopologyError::CpuList`] naming the text and the bad part.
///
/// ```
/// assert_eq!(zonal_topology::parse_cpulist("0-2,8\n")?, vec![0, 1, 2, 8]);
/// assert!(zonal_topology::parse_cpulist("3-1").is_err());
/// # Ok::<(), zonal_topology::TopologyError>(())
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
                if b - a > 1 << 20 {
                    return Err(bad(format!("range {part:?} is implausibly large")));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
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
}
