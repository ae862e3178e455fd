//! The CPUs the process's cgroup cpuset allows: cgroup v2's `cpuset.cpus.effective`, or
//! v1's `cpuset.effective_cpus` (then `cpuset.cpus`), under the cgroup that
//! `/proc/self/cgroup` names. A launcher that binds a rank through a cpuset narrows this set;
//! the runtime compares it with the process's allowed CPUs to tell a bound rank from an
//! unbound one (`zonal_runtime::is_unbound`).

use std::path::Path;

use crate::source::cpulist::parse_cpulist;

/// The CPUs this process's cgroup cpuset allows, where it can be read (`None`: no cpuset
/// controller, or none of its files readable or non-empty — then the cgroup restricts
/// nothing that can be seen).
#[must_use]
pub fn cgroup_cpus() -> Option<Vec<u32>> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_cpus_in(&cgroups, Path::new("/sys/fs/cgroup"))
}

/// [`cgroup_cpus`] for the `/proc/self/cgroup` text `cgroups`, with the cgroup file systems
/// mounted at `mount` (v2 at `mount`, v1's cpuset controller at `mount/cpuset`).
pub(crate) fn cgroup_cpus_in(cgroups: &str, mount: &Path) -> Option<Vec<u32>> {
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        // Not `id:controllers:path`: the file is not what the kernel writes; trust none of it.
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        let files = if controllers.is_empty() {
            vec![mount.join(path).join("cpuset.cpus.effective")]
        } else if controllers.split(',').any(|c| c == "cpuset") {
            let dir = mount.join("cpuset").join(path);
            vec![dir.join("cpuset.effective_cpus"), dir.join("cpuset.cpus")]
        } else {
            continue;
        };
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            if let Ok(cpus) = parse_cpulist(text.trim()) {
                if !cpus.is_empty() {
                    return Some(cpus);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A scratch cgroup mount for one test, removed when dropped.
    struct Mount(PathBuf);

    impl Mount {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("zonal-cgroup-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        fn write(&self, rel: &str, text: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    impl Drop for Mount {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn v2_reads_the_effective_cpus_of_the_process_cgroup() {
        let m = Mount::new("v2");
        m.write("job/rank1/cpuset.cpus.effective", "4-7,12\n");
        assert_eq!(
            cgroup_cpus_in("0::/job/rank1\n", &m.0),
            Some(vec![4, 5, 6, 7, 12])
        );
    }

    #[test]
    fn v1_reads_the_cpuset_controller_and_falls_back_to_cpus() {
        let m = Mount::new("v1");
        let text = "12:memory:/x\n3:cpuset,cpu:/job\n";
        m.write("cpuset/job/cpuset.cpus", "0-1\n");
        assert_eq!(cgroup_cpus_in(text, &m.0), Some(vec![0, 1]));
        m.write("cpuset/job/cpuset.effective_cpus", "1\n");
        assert_eq!(cgroup_cpus_in(text, &m.0), Some(vec![1]));
    }

    #[test]
    fn no_cpuset_unreadable_empty_or_malformed_files_restrict_nothing() {
        let m = Mount::new("none");
        // No cpuset controller in a v1 hierarchy, and no file for the v2 cgroup.
        assert_eq!(cgroup_cpus_in("4:memory:/a\n0::/missing\n", &m.0), None);
        m.write("empty/cpuset.cpus.effective", "\n");
        assert_eq!(cgroup_cpus_in("0::/empty\n", &m.0), None);
        m.write("bad/cpuset.cpus.effective", "0-x\n");
        assert_eq!(cgroup_cpus_in("0::/bad\n", &m.0), None);
        // A line that is not `id:controllers:path` makes the whole file untrusted.
        m.write("ok/cpuset.cpus.effective", "0\n");
        assert_eq!(cgroup_cpus_in("0::/ok\n", &m.0), Some(vec![0]));
        assert_eq!(cgroup_cpus_in("garbage\n0::/ok\n", &m.0), None);
    }
}
