//! Where a page is when `move_pages(2)` cannot say: the second sources of
//! [`page_nodes`](super::page_nodes), which move nothing and touch nothing.
//!
//! ## When `move_pages` answers `ENOENT` for a live page
//!
//! `move_pages` with no target nodes looks each page up with the kernel's `follow_page`.
//! Since Linux 6.1 (commit 474098edac26, "replace FOLL_NUMA by gup_can_follow_protnone()")
//! that walk refuses a page table entry that automatic NUMA balancing has made `PROT_NONE`
//! to sample its accesses (a *hinting fault*), and the page answers `ENOENT`, as an
//! untouched one does; Linux 6.5 (d74943a2f3cd, `FOLL_HONOR_NUMA_FAULT`) follows them again.
//! Debian 12's 6.1 kernel, which the guests boot, shows it (a 4-node guest, scanner made
//! aggressive: `scan_delay_ms` 0, `scan_period_min_ms` 10, `scan_period_max_ms` 20,
//! `scan_size_mb` 1024; 1,024 pages first touched on node 0, the thread then on node 1):
//! right after the write every page answers node 0; one second later `ENOENT` for 1,017
//! of them, while `/proc/self/pagemap` has all 1,017 present with frames on node 0,
//! `numa_maps` counts `N0=1024`, and `/proc/vmstat` 1,017 `numa_pte_updates`. Reading one
//! byte of each page resolves its hinting fault, and `move_pages` answers again, but
//! *node 1* for every one (`numa_pages_migrated` 1,017): a default-policy page follows the
//! thread that faults on it. So a read here never touches the memory it reports on.
//!
//! Only memory under the default policy is scanned (the scanner skips a mapping whose
//! policy does not migrate on fault: a `NodeBuffer` bound with `MPOL_BIND` or
//! `MPOL_PREFERRED`), so the pages that hide are first-touch buffers and the heap.
//!
//! ## The second sources
//!
//! 1. `/proc/self/pagemap`: one 64-bit entry per page; bit 63 present, bit 62 swapped,
//!    bits 0–54 the page frame number (zero unless the reader has `CAP_SYS_ADMIN`). A
//!    frame's node is the node of the zone whose span holds it (`/proc/zoneinfo`:
//!    `start_pfn`, `spanned`), or where zones overlap, the one node whose memory block
//!    (`/sys/devices/system/node/nodeN/memoryM`) holds it. Memory blocks alone are not
//!    enough: the S1 guest's 96 MiB nodes share 128 MiB blocks, which sysfs lists under
//!    both nodes.
//! 2. `/proc/self/numa_maps`: per mapping, its pages per node (`N0=…`), hinting-fault
//!    entries included. When every page of the mapping holding a hidden page is on one
//!    node, that is the page's node.
//!
//! A page neither source names is `PageUnknown::Hidden` (present) or, when pagemap cannot
//! be read at all, `PageUnknown::Unconfirmed`.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::FileExt;

use super::PageUnknown;

/// Bit 63 of a pagemap entry: the page is present in memory.
const PRESENT: u64 = 1 << 63;
/// Bit 62: the page is swapped out.
const SWAPPED: u64 = 1 << 62;
/// Bits 0–54: the page frame number (of a present page).
const PFN_MASK: u64 = (1 << 55) - 1;

/// Resolves, in `out`, the pages at indexes `hidden` (each answered `ENOENT` by
/// `move_pages`) of the pages starting at `start`, `page` bytes each.
pub(super) fn resolve(
    start: usize,
    page: usize,
    hidden: &[usize],
    out: &mut [Result<u32, PageUnknown>],
) {
    let (Some(&first), Some(&last)) = (hidden.first(), hidden.last()) else {
        return;
    };
    let Some(entries) = pagemap(start / page + first, last - first + 1) else {
        for &i in hidden {
            out[i] = Err(PageUnknown::Unconfirmed);
        }
        return;
    };
    let mut frames: Option<Option<FrameNodes>> = None;
    let mut unresolved = Vec::new();
    for &i in hidden {
        let e = entries[i - first];
        out[i] = if e & PRESENT == 0 {
            Err(if e & SWAPPED != 0 {
                PageUnknown::Swapped
            } else {
                PageUnknown::NotPresent
            })
        } else {
            let pfn = e & PFN_MASK;
            let node = (pfn != 0)
                .then(|| {
                    frames
                        .get_or_insert_with(FrameNodes::read)
                        .as_ref()?
                        .node(pfn, page)
                })
                .flatten();
            match node {
                Some(n) => Ok(n),
                None => {
                    unresolved.push(i);
                    Err(PageUnknown::Hidden)
                }
            }
        };
    }
    if unresolved.is_empty() {
        return;
    }
    let (Ok(maps), Ok(numa_maps)) = (
        fs::read_to_string("/proc/self/maps"),
        fs::read_to_string("/proc/self/numa_maps"),
    ) else {
        return;
    };
    let spans = mappings(&maps);
    let nodes = single_nodes(&numa_maps);
    for i in unresolved {
        let addr = start + i * page;
        let vma = spans.iter().find(|&&(s, e)| s <= addr && addr < e);
        if let Some(&n) = vma.and_then(|(s, _)| nodes.get(s)) {
            out[i] = Ok(n);
        }
    }
}

/// `count` pagemap entries from page number `first`, or `None` when pagemap cannot be read.
fn pagemap(first: usize, count: usize) -> Option<Vec<u64>> {
    let file = fs::File::open("/proc/self/pagemap").ok()?;
    let mut bytes = vec![0u8; count.checked_mul(8)?];
    file.read_exact_at(&mut bytes, u64::try_from(first).ok()?.checked_mul(8)?)
        .ok()?;
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect(),
    )
}

/// Which node holds each page frame: the zones' frame spans (`/proc/zoneinfo`), and where
/// those are ambiguous, the memory blocks (sysfs; a block may straddle two nodes when a
/// node's memory is not a multiple of the block size, so only a block of one node counts).
#[derive(Debug, Default)]
struct FrameNodes {
    /// `(first frame, end frame, node)` of each zone with pages.
    zones: Vec<(u64, u64, u32)>,
    block_bytes: u64,
    /// The nodes each memory block is listed under.
    nodes_of_block: BTreeMap<u64, Vec<u32>>,
}

impl FrameNodes {
    /// This machine's map (empty where `/proc` and sysfs do not describe it).
    fn read() -> Option<Self> {
        let mut f = FrameNodes {
            zones: fs::read_to_string("/proc/zoneinfo")
                .map(|z| zone_spans(&z))
                .unwrap_or_default(),
            ..FrameNodes::default()
        };
        if let Ok(size) = fs::read_to_string("/sys/devices/system/memory/block_size_bytes") {
            f.block_bytes = u64::from_str_radix(size.trim(), 16).unwrap_or(0);
        }
        for node in fs::read_dir("/sys/devices/system/node")
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = node.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("node")?.parse().ok())
            else {
                continue;
            };
            for e in fs::read_dir(node.path()).into_iter().flatten().flatten() {
                let name = e.file_name();
                if let Some(block) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix("memory")?.parse().ok())
                {
                    f.nodes_of_block.entry(block).or_default().push(id);
                }
            }
        }
        (!f.zones.is_empty() || f.block_bytes > 0).then_some(f)
    }

    /// The node of page frame `pfn` (`page` bytes a frame), if exactly one node can hold it.
    fn node(&self, pfn: u64, page: usize) -> Option<u32> {
        let mut zoned = self
            .zones
            .iter()
            .filter(|&&(s, e, _)| s <= pfn && pfn < e)
            .map(|&(_, _, n)| n);
        if let Some(n) = zoned.next() {
            if zoned.all(|m| m == n) {
                return Some(n);
            }
        }
        if self.block_bytes == 0 {
            return None;
        }
        let byte = pfn.checked_mul(u64::try_from(page).ok()?)?;
        match self
            .nodes_of_block
            .get(&(byte / self.block_bytes))?
            .as_slice()
        {
            [n] => Some(*n),
            _ => None,
        }
    }
}

/// The frame span of each zone with pages in `/proc/zoneinfo` (`Node N, zone NAME`, then
/// its `spanned` and `start_pfn:` fields); zones it cannot read are left out.
fn zone_spans(zoneinfo: &str) -> Vec<(u64, u64, u32)> {
    let mut out = Vec::new();
    let (mut node, mut spanned, mut start) = (None, None, None);
    let mut flush = |node: Option<u32>, spanned: Option<u64>, start: Option<u64>| {
        if let (Some(n), Some(len), Some(s)) = (node, spanned, start) {
            if len > 0 {
                out.push((s, s.saturating_add(len), n));
            }
        }
    };
    for line in zoneinfo.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Node ") {
            flush(node, spanned, start);
            node = rest.split(',').next().and_then(|n| n.trim().parse().ok());
            (spanned, start) = (None, None);
        } else if let Some(v) = t.strip_prefix("spanned") {
            spanned = v.trim().parse().ok();
        } else if let Some(v) = t.strip_prefix("start_pfn:") {
            start = v.trim().parse().ok();
        }
    }
    flush(node, spanned, start);
    out
}

/// The address ranges of `/proc/self/maps` (`start-end …`, hexadecimal), in file order;
/// lines it cannot read are left out.
fn mappings(maps: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|l| {
            let (s, e) = l.split_whitespace().next()?.split_once('-')?;
            Some((
                usize::from_str_radix(s, 16).ok()?,
                usize::from_str_radix(e, 16).ok()?,
            ))
        })
        .collect()
}

/// The mappings of `/proc/self/numa_maps` (by start address) whose pages all lie on one
/// node (exactly one `N<node>=<pages>` field), and that node.
fn single_nodes(numa_maps: &str) -> BTreeMap<usize, u32> {
    numa_maps
        .lines()
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let start = usize::from_str_radix(fields.next()?, 16).ok()?;
            let mut nodes = fields.filter_map(|f| {
                let (n, pages) = f.strip_prefix('N')?.split_once('=')?;
                Some((n.parse::<u32>().ok()?, pages.parse::<u64>().ok()?))
            });
            let (node, pages) = nodes.next()?;
            (pages > 0 && nodes.next().is_none()).then_some((start, node))
        })
        .collect()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn maps_and_numa_maps_lines_parse_and_bad_lines_are_left_out() {
        let maps = "7f00-7f80 rw-p 00000000 00:00 0 \nbad\n7f80-8000 r--p 0 0:0 0 /lib\nzz-10 x";
        assert_eq!(mappings(maps), [(0x7f00, 0x7f80), (0x7f80, 0x8000)]);
        let numa_maps = "7f00 default anon=3 dirty=3 N2=3 kernelpagesize_kB=4\n\
                         7f80 default file=/lib mapped=2 N0=1 N1=1\n\
                         8000 bind:1\n\
                         x N0=1\n\
                         9000 default N7=junk N3=2";
        let one = single_nodes(numa_maps);
        assert_eq!(
            one.into_iter().collect::<Vec<_>>(),
            [(0x7f00, 2), (0x9000, 3)]
        );
    }

    #[test]
    fn frames_are_placed_by_their_zone_else_by_a_block_of_one_node() {
        let zoneinfo = "Node 0, zone      DMA\n  pages free 1\n        spanned  4095\n  \
                        start_pfn:           1\nNode 0, zone   Normal\n        spanned  0\n  \
                        start_pfn: 0\nNode 1, zone   Normal\n        spanned  100\n  \
                        start_pfn:           24576\nNode x, zone\n spanned 9\n start_pfn: 0";
        let zones = zone_spans(zoneinfo);
        assert_eq!(zones, [(1, 4096, 0), (24576, 24676, 1)]);
        // 96 MiB nodes, 128 MiB blocks: block 0 straddles nodes 0 and 1.
        let f = FrameNodes {
            zones,
            block_bytes: 128 << 20,
            nodes_of_block: [(0, vec![0, 1]), (1, vec![1]), (2, vec![2])]
                .into_iter()
                .collect(),
        };
        assert_eq!(f.node(0x100, 4096), Some(0));
        assert_eq!(f.node(24600, 4096), Some(1));
        assert_eq!(
            f.node(8000, 4096),
            None,
            "a block of two nodes says nothing"
        );
        assert_eq!(f.node((128 << 20) / 4096, 4096), Some(1));
        assert_eq!(f.node((256 << 20) / 4096, 4096), Some(2));
        assert_eq!(f.node(u64::MAX, 4096), None);
    }

    #[test]
    fn untouched_pages_are_confirmed_absent() {
        let page = super::super::page_size();
        let r = super::super::PageRegion::new(2 * page).unwrap();
        let mut out = vec![Err(PageUnknown::Kernel(libc::ENOENT)); 2];
        resolve(r.as_ptr() as usize, page, &[0, 1], &mut out);
        assert_eq!(
            out,
            [Err(PageUnknown::NotPresent), Err(PageUnknown::NotPresent)]
        );
    }
}
