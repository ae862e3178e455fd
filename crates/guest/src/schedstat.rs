//! `/proc/schedstat`: the kernel's sched-domain spans per CPU.
//!
//! ```text
//! version 15
//! timestamp 4294892318
//! cpu0 0 0 0 0 0 0 123 456 7
//! domain0 03 0 0 …
//! domain1 0f 0 0 …
//! ```
//! A `domainK` line follows its `cpuN` line; its first field is the span as a cpumask:
//! comma-separated 32-bit hex words, most significant first (`ffffffff,00000003`). Version 17
//! (Linux 6.13) puts the domain's name before the mask. Only built, non-degenerate domains
//! are listed, innermost first.

use crate::error::GuestError;

/// One CPU and its domains' spans (CPU ids ascending), innermost domain first.
pub type CpuDomains = (u32, Vec<Vec<u32>>);

/// Versions whose domain lines this parser knows.
const VERSIONS: std::ops::RangeInclusive<u32> = 15..=17;

/// Parses the text of `/proc/schedstat` into per-CPU domain spans, in the file's CPU order.
///
/// # Errors
/// [`GuestError::Schedstat`] with the line number and the value: no or an unknown
/// `version`, a `domain` line before any `cpu` line or out of order, a bad CPU number or mask.
///
/// ```
/// let text = "version 15\ntimestamp 1\ncpu0 0 0\ndomain0 03 0 0\ndomain1 ff 0 0\ncpu1 0 0\n";
/// let cpus = zonal_guest::parse_schedstat(text)?;
/// assert_eq!(cpus[0], (0, vec![vec![0, 1], (0..8).collect()]));
/// assert_eq!(cpus[1], (1, vec![]));
/// # Ok::<(), zonal_guest::GuestError>(())
/// ```
pub fn parse_schedstat(text: &str) -> Result<Vec<CpuDomains>, GuestError> {
    let mut version = None;
    let mut cpus: Vec<CpuDomains> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let bad = |value: &str, reason| GuestError::Schedstat {
            line: n,
            value: value.to_owned(),
            reason,
        };
        let mut fields = line.split_whitespace();
        let Some(head) = fields.next() else { continue };
        if head == "version" {
            let v = fields.next().unwrap_or("");
            let v: u32 = v.parse().map_err(|_| bad(v, "not a version number"))?;
            if !VERSIONS.contains(&v) {
                return Err(bad(line, "unknown schedstat version (15 to 17 are read)"));
            }
            version = Some(v);
        } else if head == "timestamp" {
        } else if let Some(num) = head.strip_prefix("cpu") {
            if version.is_none() {
                return Err(bad(line, "no `version` line before the first cpu"));
            }
            let cpu: u32 = num.parse().map_err(|_| bad(head, "not a CPU number"))?;
            if cpus.iter().any(|(c, _)| *c == cpu) {
                return Err(bad(head, "CPU listed twice"));
            }
            cpus.push((cpu, Vec::new()));
        } else if let Some(num) = head.strip_prefix("domain") {
            let k: usize = num.parse().map_err(|_| bad(head, "not a domain number"))?;
            let Some((_, domains)) = cpus.last_mut() else {
                return Err(bad(line, "domain line before any cpu line"));
            };
            if k != domains.len() {
                return Err(bad(head, "domains out of order"));
            }
            if version.is_some_and(|v| v >= 17) {
                fields.next();
            }
            let mask = fields.next().unwrap_or("");
            let span = parse_cpumask(mask).ok_or_else(|| bad(mask, "not a cpumask"))?;
            if span.is_empty() {
                return Err(bad(mask, "empty span"));
            }
            domains.push(span);
        } else {
            return Err(bad(head, "unknown line"));
        }
    }
    if version.is_none() {
        return Err(GuestError::Schedstat {
            line: text.lines().count(),
            value: String::new(),
            reason: "no `version` line",
        });
    }
    Ok(cpus)
}

/// A kernel cpumask (`ffffffff,00000003`: 32-bit hex words, most significant first) as
/// ascending CPU ids; `None` if it is not one. At most 1,024 words (32,768 CPUs).
///
/// ```
/// assert_eq!(zonal_guest::parse_cpumask("1,80000000"), Some(vec![31, 32]));
/// assert_eq!(zonal_guest::parse_cpumask("xyz"), None);
/// ```
#[must_use]
pub fn parse_cpumask(mask: &str) -> Option<Vec<u32>> {
    let words: Vec<&str> = mask.split(',').collect();
    if words.len() > 1024 {
        return None;
    }
    let mut cpus = Vec::new();
    for (k, w) in words.iter().rev().enumerate() {
        if w.is_empty() || w.len() > 8 || !w.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let bits = u32::from_str_radix(w, 16).ok()?;
        let base = u32::try_from(k).ok()? * 32;
        cpus.extend((0..32).filter(|b| bits & (1 << b) != 0).map(|b| base + b));
    }
    cpus.sort_unstable();
    Some(cpus)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn four_node_guest() {
        let text = "version 15\ntimestamp 4294937560\n\
            cpu0 0 0 0 0 0 0 1 2 3\n\
            domain0 03 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
            domain1 0f 0 0\ndomain2 3f 0 0\ndomain3 ff 0 0\n\
            cpu2 0 0 0 0 0 0 1 2 3\ndomain0 0c 0\ndomain1 0f 0\ndomain2 cf 0\ndomain3 ff 0\n";
        let cpus = parse_schedstat(text).unwrap();
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[1].0, 2);
        assert_eq!(
            cpus[1].1,
            vec![
                vec![2, 3],
                vec![0, 1, 2, 3],
                vec![0, 1, 2, 3, 6, 7],
                (0..8).collect()
            ]
        );
    }

    #[test]
    fn multi_word_masks_and_v17_names() {
        assert_eq!(parse_cpumask("ffffffff,00000003").unwrap().len(), 34);
        assert_eq!(parse_cpumask("00000000,00000001"), Some(vec![0]));
        assert_eq!(parse_cpumask("1,,2"), None);
        assert_eq!(parse_cpumask("123456789"), None);
        let text = "version 17\ntimestamp 1\ncpu0 0\ndomain0 MC 3 0\ndomain1 NUMA f 0\n";
        assert_eq!(
            parse_schedstat(text).unwrap()[0].1,
            vec![vec![0, 1], vec![0, 1, 2, 3]]
        );
    }

    #[test]
    fn malformed_text_names_line_and_value() {
        let err = |t: &str| match parse_schedstat(t).unwrap_err() {
            GuestError::Schedstat { line, value, .. } => (line, value),
            e => panic!("{e}"),
        };
        assert_eq!(err("version 15\ndomain0 03\n"), (2, "domain0 03".into()));
        assert_eq!(err("version 15\ncpu0\ndomain0 0x3\n"), (3, "0x3".into()));
        assert_eq!(err("version 15\ncpu0\ndomain1 3\n"), (3, "domain1".into()));
        assert_eq!(err("version 15\ncpuX 1\n"), (2, "cpuX".into()));
        assert_eq!(err("version 15\ncpu0\ncpu0\n"), (3, "cpu0".into()));
        assert_eq!(err("version 9\n"), (1, "version 9".into()));
        assert_eq!(err("cpu0 1\n").0, 1);
        assert_eq!(err("").0, 0);
        assert_eq!(err("version 15\ncpu0\ndomain0 0\n"), (3, "0".into()));
        assert_eq!(err("version 15\nbogus\n"), (2, "bogus".into()));
    }
}
