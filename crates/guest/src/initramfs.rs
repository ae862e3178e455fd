//! The guest's root file system: a cpio `newc` archive, written here (no external `cpio`).
//!
//! It holds busybox at `/bin/busybox`, an `/init` script, `/dev/console`, the job at
//! `/job.sh`, and whatever binaries and files were added. `/init` installs busybox's applets,
//! mounts proc, sysfs, devtmpfs (`/dev`), cgroup2 (`/sys/fs/cgroup`) and debugfs
//! (`/sys/kernel/debug`) (a failed mount is ignored), quietens the kernel's console, prints
//! `ZONAL-GUEST-BEGIN`, runs `/job.sh` with `sh`, prints `ZONAL-GUEST-END rc=<status>` and
//! powers off.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{io, GuestError};

/// The line `/init` prints before the job.
pub const BEGIN_MARKER: &str = "ZONAL-GUEST-BEGIN";
/// The start of the line `/init` prints after the job (`ZONAL-GUEST-END rc=N`).
pub const END_MARKER: &str = "ZONAL-GUEST-END rc=";

const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# Kernel messages below emergencies would interleave with the job's output.
echo 1 > /proc/sys/kernel/printk 2>/dev/null
cd /
echo ZONAL-GUEST-BEGIN
sh /job.sh
echo "ZONAL-GUEST-END rc=$?"
poweroff -f
"#;

/// Where an entry's bytes come from.
#[derive(Clone, Debug)]
enum Content {
    Bytes(Vec<u8>),
    /// A host file, read when the archive is written.
    Host(PathBuf),
    /// A host executable, written without its debug sections (`objcopy --strip-debug`,
    /// when available) so that debug builds fit small guests.
    Executable(PathBuf),
}

#[derive(Clone, Debug)]
struct Entry {
    content: Content,
    mode: u32,
}

/// A builder of the guest's initramfs.
///
/// ```no_run
/// # use zonal_guest::{find_busybox, Initramfs};
/// Initramfs::new(&find_busybox()?)?
///     .binary("target/debug/examples/topology", "/bin/topology")?
///     .job("topology --json")
///     .write("/tmp/initrd.cpio")?;
/// # Ok::<(), zonal_guest::GuestError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Initramfs {
    /// Guest path (absolute, clean) → file.
    files: BTreeMap<String, Entry>,
}

impl Initramfs {
    /// An archive with `busybox` (a static build) at `/bin/busybox`, `/init` and an empty job.
    ///
    /// # Errors
    /// [`GuestError::Io`] if `busybox` is not a readable file.
    pub fn new(busybox: &Path) -> Result<Self, GuestError> {
        check_host_file(busybox)?;
        let mut files = BTreeMap::new();
        files.insert(
            "/bin/busybox".to_owned(),
            Entry {
                content: Content::Host(busybox.to_path_buf()),
                mode: 0o755,
            },
        );
        files.insert(
            "/init".to_owned(),
            Entry {
                content: Content::Bytes(INIT.as_bytes().to_vec()),
                mode: 0o755,
            },
        );
        Ok(Self { files }.job(""))
    }

    /// Adds the executable `host_path` at `guest_path`, and every shared library `ldd
    /// host_path` lists (the dynamic loader included) at the same absolute path as on the
    /// host. Its debug sections are left out when `objcopy` is available.
    ///
    /// # Errors
    /// [`GuestError::GuestPath`], [`GuestError::Io`] (the binary is missing),
    /// [`GuestError::Ldd`] (ldd could not run), [`GuestError::LibraryNotFound`].
    pub fn binary(
        mut self,
        host_path: impl AsRef<Path>,
        guest_path: &str,
    ) -> Result<Self, GuestError> {
        let host_path = host_path.as_ref();
        let guest_path = clean_guest_path(guest_path)?;
        check_host_file(host_path)?;
        for lib in shared_libraries(host_path)? {
            let guest = clean_guest_path(&lib.to_string_lossy())?;
            self.files.insert(
                guest,
                Entry {
                    content: Content::Host(lib),
                    mode: 0o755,
                },
            );
        }
        self.files.insert(
            guest_path,
            Entry {
                content: Content::Executable(host_path.to_path_buf()),
                mode: 0o755,
            },
        );
        Ok(self)
    }

    /// Adds a file with these bytes and permission bits (`0o644`, `0o755`).
    ///
    /// # Errors
    /// [`GuestError::GuestPath`].
    pub fn file(
        mut self,
        guest_path: &str,
        bytes: impl Into<Vec<u8>>,
        mode: u32,
    ) -> Result<Self, GuestError> {
        let guest_path = clean_guest_path(guest_path)?;
        self.files.insert(
            guest_path,
            Entry {
                content: Content::Bytes(bytes.into()),
                mode: mode & 0o7777,
            },
        );
        Ok(self)
    }

    /// Sets the job: a shell script `/init` runs with `sh` between the markers; its exit
    /// status becomes the run's exit code.
    #[must_use]
    pub fn job(mut self, script: &str) -> Self {
        let mut text = script.to_owned();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.files.insert(
            "/job.sh".to_owned(),
            Entry {
                content: Content::Bytes(text.into_bytes()),
                mode: 0o755,
            },
        );
        self
    }

    /// The guest paths of the files the archive holds, in order: busybox, `/init`, the job,
    /// each binary and the shared libraries added with it, and the added files (the
    /// directories and device nodes [`write`](Self::write) adds are left out).
    pub fn paths(&self) -> impl Iterator<Item = &str> + '_ {
        self.files.keys().map(String::as_str)
    }

    /// Writes the archive to `path`.
    ///
    /// # Errors
    /// [`GuestError::Io`] naming the file that could not be read or written.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), GuestError> {
        let path = path.as_ref();
        let file = std::fs::File::create(path).map_err(io(path))?;
        let mut out = Cpio::new(std::io::BufWriter::new(file));
        let result = self.write_entries(&mut out, path);
        let result = result.and_then(|()| out.finish().map_err(io(path)));
        if result.is_err() {
            let _ = std::fs::remove_file(path);
        }
        result
    }

    fn write_entries<W: Write>(&self, out: &mut Cpio<W>, path: &Path) -> Result<(), GuestError> {
        let mut dirs: BTreeMap<String, ()> = BTreeMap::new();
        for d in [
            "/bin",
            "/sbin",
            "/usr/bin",
            "/usr/sbin",
            "/dev",
            "/proc",
            "/sys",
            "/tmp",
            "/root",
        ] {
            dirs.insert(d.to_owned(), ());
        }
        for guest in self.files.keys() {
            let mut p = Path::new(guest.as_str()).parent();
            while let Some(dir) = p {
                let d = dir.to_string_lossy();
                if d != "/" {
                    dirs.insert(d.into_owned(), ());
                }
                p = dir.parent();
            }
        }
        // Parents sort before their children.
        for dir in dirs.keys() {
            out.entry(dir, 0o040_755, b"", (0, 0)).map_err(io(path))?;
        }
        out.entry("/dev/console", 0o020_600, b"", (5, 1))
            .map_err(io(path))?;
        out.entry("/dev/null", 0o020_666, b"", (1, 3))
            .map_err(io(path))?;
        for (guest, e) in &self.files {
            let bytes = match &e.content {
                Content::Bytes(b) => b.clone(),
                Content::Host(h) => std::fs::read(h).map_err(io(h))?,
                Content::Executable(h) => read_without_debug(h, path)?,
            };
            out.entry(guest, 0o100_000 | e.mode, &bytes, (0, 0))
                .map_err(io(path))?;
        }
        Ok(())
    }
}

/// The cpio `newc` format ("070701"): a 110-byte ASCII header of thirteen 8-digit hex
/// fields, the NUL-terminated name padded to 4 bytes, the data padded to 4 bytes.
struct Cpio<W: Write> {
    w: W,
    ino: u32,
}

impl<W: Write> Cpio<W> {
    fn new(w: W) -> Self {
        Self { w, ino: 1 }
    }

    fn entry(
        &mut self,
        name: &str,
        mode: u32,
        data: &[u8],
        rdev: (u32, u32),
    ) -> std::io::Result<()> {
        // Archive names are relative ("bin/busybox"), as the kernel's own lists are.
        let name = name.trim_start_matches('/');
        let size = u32::try_from(data.len()).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{name}: {} bytes, more than cpio's 4 GiB", data.len()),
            )
        })?;
        let nlink = if mode & 0o170_000 == 0o040_000 { 2 } else { 1 };
        let header = format!(
            "070701{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
            self.ino,
            mode,
            0,
            0,
            nlink,
            0,
            size,
            0,
            0,
            rdev.0,
            rdev.1,
            name.len() + 1,
            0
        );
        self.ino += 1;
        self.w.write_all(header.as_bytes())?;
        self.w.write_all(name.as_bytes())?;
        self.w.write_all(&[0])?;
        self.pad(header.len() + name.len() + 1)?;
        self.w.write_all(data)?;
        self.pad(data.len())
    }

    fn pad(&mut self, len: usize) -> std::io::Result<()> {
        let pad = (4 - len % 4) % 4;
        self.w.write_all(&[0u8; 3][..pad])
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.entry("TRAILER!!!", 0, b"", (0, 0))?;
        self.w.flush()
    }
}

/// A guest path: absolute, without `.`/`..` components or empty names, not the root.
fn clean_guest_path(path: &str) -> Result<String, GuestError> {
    let bad = |reason| GuestError::GuestPath {
        path: path.to_owned(),
        reason,
    };
    if !path.starts_with('/') {
        return Err(bad("not absolute"));
    }
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(bad("has an empty, `.` or `..` component"));
    }
    if path.contains('\0') {
        return Err(bad("contains a NUL byte"));
    }
    Ok(path.to_owned())
}

fn check_host_file(path: &Path) -> Result<(), GuestError> {
    let meta = std::fs::metadata(path).map_err(io(path))?;
    if !meta.is_file() {
        return Err(GuestError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
        });
    }
    Ok(())
}

/// The shared libraries and loader `ldd` lists for `binary` (none for a static binary).
fn shared_libraries(binary: &Path) -> Result<Vec<PathBuf>, GuestError> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(|e| GuestError::Ldd {
            binary: binary.to_path_buf(),
            message: format!("cannot run ldd: {e}"),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // A static binary: glibc's ldd says so and exits with 1.
        if stdout.contains("not a dynamic executable")
            || stderr.contains("not a dynamic executable")
        {
            return Ok(Vec::new());
        }
        return Err(GuestError::Ldd {
            binary: binary.to_path_buf(),
            message: format!("{}: {}", out.status, stderr.trim()),
        });
    }
    parse_ldd(&stdout, binary)
}

/// Reads `ldd`'s lines: `name => /path (0x…)`, `/loader (0x…)`, `linux-vdso.so.1 (0x…)`,
/// `name => not found`, `statically linked`.
fn parse_ldd(text: &str, binary: &Path) -> Result<Vec<PathBuf>, GuestError> {
    let mut libs = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let target = match line.split_once("=>") {
            Some((name, rest)) => {
                let rest = rest.trim();
                if rest.starts_with("not found") {
                    return Err(GuestError::LibraryNotFound {
                        binary: binary.to_path_buf(),
                        library: name.trim().to_owned(),
                    });
                }
                rest
            }
            None => line,
        };
        let path = target.split_whitespace().next().unwrap_or("");
        if path.starts_with('/') {
            libs.push(PathBuf::from(path));
        }
    }
    Ok(libs)
}

/// The executable's bytes without debug sections (`objcopy --strip-debug`), or as they are
/// when objcopy is missing or fails.
fn read_without_debug(host: &Path, archive: &Path) -> Result<Vec<u8>, GuestError> {
    let tmp = archive.with_extension("strip.tmp");
    let stripped = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(host)
        .arg(&tmp)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let bytes = if stripped {
        std::fs::read(&tmp).map_err(io(&tmp))
    } else {
        std::fs::read(host).map_err(io(host))
    };
    let _ = std::fs::remove_file(&tmp);
    bytes
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn ldd_lines() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n\t/lib64/ld-linux-x86-64.so.2 (0x7f)\n";
        let libs = parse_ldd(text, Path::new("b")).unwrap();
        assert_eq!(
            libs,
            vec![
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
        let e = parse_ldd("\tlibhwloc.so.15 => not found\n", Path::new("b")).unwrap_err();
        assert!(
            matches!(e, GuestError::LibraryNotFound { ref library, .. } if library == "libhwloc.so.15")
        );
        assert!(parse_ldd("\tstatically linked\n", Path::new("b"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn guest_paths() {
        assert!(clean_guest_path("/bin/x").is_ok());
        for bad in ["bin/x", "/bin/../x", "/bin//x", "/", "/bin/"] {
            assert!(
                matches!(clean_guest_path(bad), Err(GuestError::GuestPath { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn newc_layout() {
        let mut buf = Vec::new();
        let mut c = Cpio::new(&mut buf);
        c.entry("/a", 0o100_644, b"hello", (0, 0)).unwrap();
        c.finish().unwrap();
        let text = String::from_utf8_lossy(&buf);
        assert!(text.starts_with("070701"));
        // Header 110 + "a\0" = 112 (aligned), data 5 → padded to 8.
        assert_eq!(&buf[110..112], b"a\0");
        assert_eq!(&buf[112..117], b"hello");
        assert_eq!(&buf[120..126], b"070701");
        assert_eq!(buf.len() % 4, 0);
        assert!(text.contains("TRAILER!!!"));
        // File size field: the 7th field.
        assert_eq!(&buf[6 + 6 * 8..6 + 7 * 8], b"00000005");
    }

    #[test]
    fn paths_list_the_files_added() {
        let dir = std::env::temp_dir().join(format!("zonal-guest-paths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("busybox");
        std::fs::write(&fake, b"#!bb").unwrap();
        let archive = Initramfs::new(&fake)
            .unwrap()
            .file("/etc/x.conf", "x", 0o644)
            .unwrap();
        assert_eq!(
            archive.paths().collect::<Vec<_>>(),
            ["/bin/busybox", "/etc/x.conf", "/init", "/job.sh"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn archive_has_init_dirs_and_job() {
        let dir = std::env::temp_dir().join(format!("zonal-guest-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("busybox");
        std::fs::write(&fake, b"#!bb").unwrap();
        let out = dir.join("initrd.cpio");
        Initramfs::new(&fake)
            .unwrap()
            .file("/etc/deep/x.conf", "x", 0o644)
            .unwrap()
            .job("exit 3")
            .write(&out)
            .unwrap();
        let bytes = std::fs::read(&out).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for name in [
            "bin/busybox\0",
            "init\0",
            "etc\0",
            "etc/deep\0",
            "job.sh\0",
            "dev/console\0",
        ] {
            assert!(text.contains(name), "{name}");
        }
        assert!(text.contains("exit 3\n"));
        assert!(text.contains(BEGIN_MARKER) && text.contains(END_MARKER));
        assert!(matches!(
            Initramfs::new(&dir.join("missing")),
            Err(GuestError::Io { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
