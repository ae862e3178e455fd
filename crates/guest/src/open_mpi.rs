//! Open MPI inside a guest: `mpirun` starts ranks in the guest's kernel, binds them
//! (`--bind-to numa`) with the guest's own hwloc view, and the ranks talk over shared
//! memory, so the launcher's binding can be checked against the kernel that enforces it.
//!
//! `ldd` is not enough for an MPI program: Open MPI opens its components (`mca_*.so`) and
//! PMIx its own plugins with `dlopen` at run time, reads its help texts and parameter files
//! from its data and configuration directories, and starts a daemon (`orted`) beside
//! `mpirun`. [`OpenMpi::find`] asks the installed `ompi_info` where each of these lives;
//! [`OpenMpi::add_to`] puts them into an [`Initramfs`] at the same paths, each plugin with
//! the shared libraries `ldd` lists for it. A job then starts with [`JOB_SETUP`], which
//! gives the guest what `mpirun` expects of a machine: a host name, a loopback interface
//! for its out-of-band channel, `/dev/shm` for the shared-memory transport, and leave to
//! run as root.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::io;
use crate::{GuestError, Initramfs};

/// Shell lines a guest job runs before `mpirun`: a host name (Open MPI refuses the kernel's
/// `(none)`), loopback up (its out-of-band channel needs an interface), a tmpfs on
/// `/dev/shm` (the `vader` shared-memory transport), leave to run as root (the guest's only
/// user), single-node launch (`plm = isolated`: no `ssh` to look for) and the
/// shared-memory and self transports only (the guest has no network).
pub const JOB_SETUP: &str = "hostname guest
ifconfig lo 127.0.0.1 up
mkdir -p /dev/shm /tmp && mount -t tmpfs tmpfs /dev/shm
export HOME=/tmp TMPDIR=/tmp
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader
";

/// Most files taken from one of Open MPI's data or configuration directories: a guard
/// against a directory that is not what `ompi_info` says (Debian's has about 110).
const MAX_DATA_FILES: usize = 2_000;

/// An Open MPI installation on the host, as its `ompi_info` describes it.
#[derive(Clone, Debug)]
pub struct OpenMpi {
    /// `mpirun` (a link to `orterun` on Open MPI 4), resolved.
    mpirun: PathBuf,
    /// The daemon `mpirun` starts on each node, `orted`.
    orted: PathBuf,
    /// Directories of components loaded at run time (`pkglibdir`).
    plugin_dirs: Vec<PathBuf>,
    /// Directories of help texts and parameter files (`pkgdatadir`, `sysconfdir`).
    data_dirs: Vec<PathBuf>,
}

impl OpenMpi {
    /// Finds the installation: `ompi_info --parsable --path all` gives its `bindir`,
    /// `pkglibdir`, `pkgdatadir` and `sysconfdir`.
    ///
    /// # Errors
    /// [`GuestError::OpenMpiMissing`] when `ompi_info` cannot run or does not name those
    /// directories, or `mpirun`/`orted` is not in `bindir`.
    pub fn find() -> Result<Self, GuestError> {
        let out = Command::new("ompi_info")
            .args(["--parsable", "--path", "all"])
            .output()
            .map_err(|e| missing(format!("cannot run ompi_info: {e}")))?;
        if !out.status.success() {
            return Err(missing(format!("ompi_info exited with {}", out.status)));
        }
        Self::from_paths(&String::from_utf8_lossy(&out.stdout))
    }

    /// The installation `ompi_info --parsable --path all` printed (`path:NAME:DIR` lines).
    fn from_paths(text: &str) -> Result<Self, GuestError> {
        let path = |name: &str| -> Result<PathBuf, GuestError> {
            text.lines()
                .filter_map(|l| l.strip_prefix("path:"))
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(PathBuf::from)
                .ok_or_else(|| missing(format!("ompi_info names no {name}")))
        };
        let bindir = path("bindir")?;
        let program = |name: &str| -> Result<PathBuf, GuestError> {
            let p = bindir.join(name);
            std::fs::canonicalize(&p).map_err(|e| missing(format!("{}: {e}", p.display())))
        };
        Ok(Self {
            mpirun: program("mpirun")?,
            orted: program("orted")?,
            plugin_dirs: vec![path("pkglibdir")?],
            data_dirs: vec![path("pkgdatadir")?, path("sysconfdir")?],
        })
    }

    /// Adds `mpirun` (at `/usr/bin/mpirun`), `orted` (at its own path, where `mpirun`
    /// looks for it), every component of the plugin directories and every file of the data
    /// directories at their host paths, and PMIx's own plugins and data beside the PMIx
    /// library the components link.
    ///
    /// # Errors
    /// What [`Initramfs::binary`] returns for a program or plugin; [`GuestError::Io`] for a
    /// directory that cannot be read; [`GuestError::OpenMpiMissing`] for one with more than
    /// 2,000 files.
    pub fn add_to(&self, initramfs: Initramfs) -> Result<Initramfs, GuestError> {
        let mut initramfs = initramfs
            .binary(&self.mpirun, "/usr/bin/mpirun")?
            .binary(&self.orted, &self.orted.to_string_lossy())?;
        for dir in &self.plugin_dirs {
            initramfs = add_plugins(initramfs, dir)?;
        }
        // PMIx's plugins sit in `pmix/` beside its library's real file, its data in
        // `../share/pmix` (Debian: /usr/lib/x86_64-linux-gnu/pmix2/{lib,share}). The
        // library is in the archive already, at the path `ldd` gave for a component that
        // links it (`Initramfs::binary` keeps host paths for libraries).
        let mut pmix_libs: Vec<PathBuf> = initramfs
            .paths()
            .filter(|p| {
                Path::new(p)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("libpmix.so"))
            })
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        pmix_libs.sort();
        pmix_libs.dedup();
        let mut data_dirs = self.data_dirs.clone();
        for lib in pmix_libs {
            let Some(dir) = lib.parent() else { continue };
            let plugins = dir.join("pmix");
            if plugins.is_dir() {
                initramfs = add_plugins(initramfs, &plugins)?;
            }
            if let Some(share) = dir.parent().map(|p| p.join("share")) {
                if share.is_dir() {
                    data_dirs.push(share);
                }
            }
        }
        for dir in &data_dirs {
            for file in files_under(dir)? {
                let bytes = std::fs::read(&file).map_err(io(&file))?;
                initramfs = initramfs.file(&file.to_string_lossy(), bytes, 0o644)?;
            }
        }
        Ok(initramfs)
    }
}

fn missing(reason: String) -> GuestError {
    GuestError::OpenMpiMissing { reason }
}

/// Every component (`*.so`) under `dir`, at its host path, with its shared libraries.
fn add_plugins(mut initramfs: Initramfs, dir: &Path) -> Result<Initramfs, GuestError> {
    for plugin in files_under(dir)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "so"))
    {
        initramfs = initramfs.binary(&plugin, &plugin.to_string_lossy())?;
    }
    Ok(initramfs)
}

/// Every regular file under `dir`, recursively, sorted; links followed to files only.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, GuestError> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).map_err(io(&d))? {
            let path = entry.map_err(io(&d))?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.is_file() {
                files.push(path);
                if files.len() > MAX_DATA_FILES {
                    return Err(missing(format!(
                        "{} holds more than {MAX_DATA_FILES} files",
                        dir.display()
                    )));
                }
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_come_from_ompi_info_lines() {
        let dir = std::env::temp_dir().join(format!("zonal-ompi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for p in ["mpirun", "orted"] {
            std::fs::write(dir.join(p), b"").unwrap();
        }
        let text = format!(
            "path:prefix:/usr\npath:bindir:{d}\npath:pkglibdir:/x/lib/openmpi3\n\
             path:pkgdatadir:/x/share/openmpi\npath:sysconfdir:/x/etc/openmpi\n",
            d = dir.display()
        );
        let ompi = OpenMpi::from_paths(&text).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(ompi.plugin_dirs, [PathBuf::from("/x/lib/openmpi3")]);
        assert_eq!(
            ompi.data_dirs,
            [
                PathBuf::from("/x/share/openmpi"),
                PathBuf::from("/x/etc/openmpi")
            ]
        );
        assert!(ompi.mpirun.ends_with("mpirun"));
    }

    #[test]
    fn a_missing_directory_or_program_is_named() {
        let e = OpenMpi::from_paths("path:bindir:/nonexistent-zonal\n").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-zonal/mpirun"), "{e}");
        let e = OpenMpi::from_paths("path:prefix:/usr\n").unwrap_err();
        assert!(e.to_string().contains("no bindir"), "{e}");
    }
}
