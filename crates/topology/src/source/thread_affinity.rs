//! The CPUs the calling thread may run on, as the kernel reports them:
//! `Cpus_allowed_list` in `ROOT/proc/thread-self/status` (Linux ≥ 3.17), else in
//! `ROOT/proc/self/status`.
//!
//! The kernel has already applied everything that restricts a thread there: its own
//! affinity mask (`taskset`, `sched_setaffinity`) and the cgroup cpuset (v1 and v2), which
//! is what hwloc's discovery reads as the thread's binding intersected with its allowed
//! set. It is the calling thread's mask, not the process's, as `sched_getaffinity(0)` and
//! std's `available_parallelism` read it.

use std::path::Path;

use crate::error::{Result, TopologyError};
use crate::source::cpulist::parse_cpulist;

/// The calling thread's allowed CPUs (OS indexes, ascending), or `None` when neither status
/// file exists (no `/proc`): nothing is known, and nothing should be withheld.
///
/// # Errors
/// [`TopologyError::ProcStatus`] naming the file when it has no `Cpus_allowed_list` line or
/// a malformed one, [`TopologyError::Io`] when it exists but cannot be read.
pub(crate) fn allowed_cpus_in(root: &Path) -> Result<Option<Vec<u32>>> {
    for status in ["proc/thread-self/status", "proc/self/status"] {
        let path = root.join(status);
        let text = match super::input::read_text(&path) {
            Ok(text) => text,
            Err(TopologyError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        return allowed_in_status(&path, &text).map(Some);
    }
    Ok(None)
}

fn allowed_in_status(path: &Path, text: &str) -> Result<Vec<u32>> {
    let bad = |message: String| TopologyError::ProcStatus {
        path: path.to_owned(),
        message,
    };
    let value = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| bad("no Cpus_allowed_list line".to_owned()))?;
    parse_cpulist(value).map_err(|e| bad(format!("Cpus_allowed_list: {e}")))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reads_the_thread_then_the_process() {
        let root = std::env::temp_dir().join(format!("zonal-affinity-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(allowed_cpus_in(&root).unwrap(), None, "no /proc");
        std::fs::create_dir_all(root.join("proc/self")).unwrap();
        std::fs::write(
            root.join("proc/self/status"),
            "Name:\tx\nCpus_allowed:\tf\nCpus_allowed_list:\t0-2,5\n",
        )
        .unwrap();
        assert_eq!(allowed_cpus_in(&root).unwrap(), Some(vec![0, 1, 2, 5]));
        std::fs::create_dir_all(root.join("proc/thread-self")).unwrap();
        std::fs::write(
            root.join("proc/thread-self/status"),
            "Cpus_allowed_list:\t3\n",
        )
        .unwrap();
        assert_eq!(allowed_cpus_in(&root).unwrap(), Some(vec![3]));
        std::fs::write(
            root.join("proc/thread-self/status"),
            "Cpus_allowed_list:\t3-x\n",
        )
        .unwrap();
        let e = allowed_cpus_in(&root).unwrap_err().to_string();
        assert!(e.contains("thread-self/status") && e.contains("3-x"), "{e}");
        std::fs::write(root.join("proc/thread-self/status"), "Name:\tx\n").unwrap();
        let e = allowed_cpus_in(&root).unwrap_err().to_string();
        assert!(
            e.contains("thread-self/status") && e.contains("Cpus_allowed_list"),
            "{e}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn this_thread_has_cpus() {
        let cpus = allowed_cpus_in(Path::new("/")).unwrap();
        assert!(cpus.is_none_or(|c| !c.is_empty()));
    }
}
