//! Booting a guest: QEMU with the spec's arguments, the kernel and the initramfs, its console
//! captured, killed at the timeout; the job's output cut out between the markers.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{io, GuestError};
use crate::initramfs::{Initramfs, BEGIN_MARKER, END_MARKER};
use crate::spec::GuestSpec;

/// The kernel command line every guest gets (then [`Guest::kernel_args`]): serial console,
/// quiet, reboot (so QEMU exits with `-no-reboot`) at once on a panic, a preset delay-loop
/// calibration and a trusted TSC (calibrating under TCG takes seconds), no mitigations, and
/// no check that the timer interrupt arrives through the IO-APIC within a few loops
/// (`no_timer_check`): on a busy host a TCG vCPU can be starved through that window, and the
/// kernel then panics at boot ("IO-APIC + timer doesn't work!", seen with two busy loops
/// beside the guest tests on 2 cores).
pub const DEFAULT_KERNEL_ARGS: &str =
    "console=ttyS0 quiet panic=-1 lpj=4000000 tsc=reliable mitigations=off no_timer_check";

/// The QEMU program (override with `ZONAL_GUEST_QEMU`).
const QEMU: &str = "qemu-system-x86_64";

/// How many console lines a timeout or failure reports.
const TAIL_LINES: usize = 30;

/// The kernel image: `ZONAL_GUEST_KERNEL` if set, else the newest `/boot/vmlinuz-*` (by
/// version-aware name order).
///
/// # Errors
/// [`GuestError::KernelMissing`] naming where it looked.
pub fn find_kernel() -> Result<PathBuf, GuestError> {
    let found = find_kernel_image()?;
    // Ubuntu installs kernels readable by root only; QEMU would fail later with less to say.
    std::fs::File::open(&found).map_err(|e| GuestError::KernelMissing {
        searched: format!("{} is not readable: {e}", found.display()),
    })?;
    Ok(found)
}

fn find_kernel_image() -> Result<PathBuf, GuestError> {
    if let Some(p) = std::env::var_os("ZONAL_GUEST_KERNEL") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(GuestError::KernelMissing {
                searched: format!("ZONAL_GUEST_KERNEL={}", p.display()),
            })
        };
    }
    let missing = || GuestError::KernelMissing {
        searched: "/boot/vmlinuz-*".into(),
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir("/boot")
        .map_err(|_| missing())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))
                && p.is_file()
        })
        .collect();
    found.sort_by_key(|p| version_key(&p.to_string_lossy()));
    found.pop().ok_or_else(missing)
}

/// Orders `vmlinuz-6.1.0-10-amd64` after `vmlinuz-6.1.0-9-amd64`: digit runs compare as numbers.
fn version_key(name: &str) -> Vec<(u64, String)> {
    let mut key = Vec::new();
    let mut digits = String::new();
    let mut other = String::new();
    for ch in name.chars() {
        if ch.is_ascii_digit() {
            if !other.is_empty() {
                key.push((0, std::mem::take(&mut other)));
            }
            digits.push(ch);
        } else {
            if !digits.is_empty() {
                key.push((digits.parse().unwrap_or(u64::MAX), String::new()));
                digits.clear();
            }
            other.push(ch);
        }
    }
    if !digits.is_empty() {
        key.push((digits.parse().unwrap_or(u64::MAX), String::new()));
    }
    if !other.is_empty() {
        key.push((0, other));
    }
    key
}

/// A static busybox: `ZONAL_GUEST_BUSYBOX` if set, else `/usr/bin/busybox` or `/bin/busybox`.
///
/// # Errors
/// [`GuestError::BusyboxMissing`] naming where it looked.
pub fn find_busybox() -> Result<PathBuf, GuestError> {
    if let Some(p) = std::env::var_os("ZONAL_GUEST_BUSYBOX") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(GuestError::BusyboxMissing {
                searched: format!("ZONAL_GUEST_BUSYBOX={}", p.display()),
            })
        };
    }
    ["/usr/bin/busybox", "/bin/busybox"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| GuestError::BusyboxMissing {
            searched: "/usr/bin/busybox, /bin/busybox".into(),
        })
}

/// What a finished guest returns.
#[derive(Clone, Debug)]
pub struct GuestRun {
    /// The console lines between `ZONAL-GUEST-BEGIN` and `ZONAL-GUEST-END`, each ending in `\n`.
    pub job_output: String,
    /// The job's exit status (from `rc=`).
    pub exit_code: i32,
    /// Everything QEMU wrote (stdout, then stderr), without `\r`.
    pub console: String,
    /// From spawning QEMU to its exit.
    pub elapsed: Duration,
}

/// A guest ready to boot.
#[derive(Debug)]
pub struct Guest {
    spec: GuestSpec,
    initramfs: Initramfs,
    timeout: Duration,
    quiet_limit: Option<Duration>,
    kernel_args: String,
    kernel: Option<PathBuf>,
}

impl Guest {
    /// A guest of this shape running this initramfs's job; timeout 300 s, the kernel of
    /// [`find_kernel`].
    #[must_use]
    pub fn new(spec: GuestSpec, initramfs: Initramfs) -> Self {
        Self {
            spec,
            initramfs,
            timeout: Duration::from_secs(300),
            quiet_limit: None,
            kernel_args: String::new(),
            kernel: None,
        }
    }

    /// Kills QEMU when the job has not finished after this long.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Kills QEMU when its console has printed nothing for this long
    /// ([`GuestError::Silent`]); none by default. A limit on progress rather than on the
    /// whole run: an emulated guest on a loaded host runs 10–50 times slower, and a job
    /// that keeps printing (a step ending, a progress line) keeps its guest alive up to
    /// [`timeout`](Self::timeout), while a hung one is ended after this long.
    #[must_use]
    pub fn quiet_limit(mut self, limit: Duration) -> Self {
        self.quiet_limit = Some(limit);
        self
    }

    /// Extra kernel command-line arguments, after [`DEFAULT_KERNEL_ARGS`].
    #[must_use]
    pub fn kernel_args(mut self, args: &str) -> Self {
        self.kernel_args = args.to_owned();
        self
    }

    /// Boots this kernel image instead of [`find_kernel`]'s.
    #[must_use]
    pub fn kernel(mut self, image: impl Into<PathBuf>) -> Self {
        self.kernel = Some(image.into());
        self
    }

    /// The shape.
    #[must_use]
    pub fn spec(&self) -> &GuestSpec {
        &self.spec
    }

    /// Boots the guest, waits for its job and power-off (or the timeout), and returns the
    /// job's output and exit code. The initramfs goes to a fresh directory under
    /// [`std::env::temp_dir`], removed afterwards.
    ///
    /// # Errors
    /// [`GuestError::KernelMissing`], [`GuestError::QemuMissing`], [`GuestError::Io`],
    /// [`GuestError::Timeout`], [`GuestError::Silent`], [`GuestError::NoMarkers`].
    pub fn run(&self) -> Result<GuestRun, GuestError> {
        let kernel = match &self.kernel {
            Some(k) if k.is_file() => k.clone(),
            Some(k) => {
                return Err(GuestError::KernelMissing {
                    searched: k.display().to_string(),
                })
            }
            None => find_kernel()?,
        };
        let dir = TempDir::new()?;
        let initrd = dir.0.join("initrd.cpio");
        self.initramfs.write(&initrd)?;
        let qemu = std::env::var("ZONAL_GUEST_QEMU").unwrap_or_else(|_| QEMU.to_owned());
        let args = self.spec.qemu_args(&kernel, &initrd, &self.kernel_args);
        let start = Instant::now();
        let mut child = Command::new(&qemu)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    GuestError::QemuMissing {
                        program: qemu.clone(),
                    }
                } else {
                    GuestError::Io {
                        path: qemu.clone().into(),
                        source: e,
                    }
                }
            })?;
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let readers = [
            child.stdout.take().map(|s| drain(s, Arc::clone(&stdout))),
            child.stderr.take().map(|s| drain(s, Arc::clone(&stderr))),
        ];
        let deadline = start + self.timeout;
        let printed = || {
            let len = |b: &Arc<Mutex<Vec<u8>>>| b.lock().map_or(0, |b| b.len());
            len(&stdout) + len(&stderr)
        };
        let (mut seen, mut last_output) = (0, start);
        let mut silent = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) => {
                    let now = Instant::now();
                    let n = printed();
                    if n != seen {
                        (seen, last_output) = (n, now);
                    }
                    silent = self.quiet_limit.is_some_and(|q| now >= last_output + q);
                    if now >= deadline || silent {
                        let _ = child.kill();
                        let _ = child.wait();
                        break None;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(GuestError::Io {
                        path: qemu.into(),
                        source: e,
                    });
                }
            }
        };
        let elapsed = start.elapsed();
        for r in readers.into_iter().flatten() {
            let _ = r.join();
        }
        let text = |buf: &Arc<Mutex<Vec<u8>>>| {
            let bytes = buf.lock().map(|b| b.clone()).unwrap_or_default();
            String::from_utf8_lossy(&bytes).replace('\r', "")
        };
        let mut console = text(&stdout);
        let err = text(&stderr);
        if !err.is_empty() {
            if !console.is_empty() && !console.ends_with('\n') {
                console.push('\n');
            }
            console.push_str(&err);
        }
        let Some(status) = status else {
            if silent {
                return Err(GuestError::Silent {
                    seconds: self.quiet_limit.map_or(0, |q| q.as_secs()),
                    console_tail: tail(&console),
                });
            }
            return Err(GuestError::Timeout {
                seconds: self.timeout.as_secs(),
                console_tail: tail(&console),
            });
        };
        match cut_job_output(&console) {
            Some((job_output, exit_code)) => Ok(GuestRun {
                job_output,
                exit_code,
                console,
                elapsed,
            }),
            None => Err(GuestError::NoMarkers {
                status: status.to_string(),
                console_tail: tail(&console),
            }),
        }
    }
}

/// Reads a pipe to its end on a thread, so that a full pipe never blocks QEMU.
fn drain(mut pipe: impl Read + Send + 'static, into: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut v) = into.lock() {
                        v.extend_from_slice(&buf[..n]);
                    }
                }
            }
        }
    })
}

/// The lines between the begin marker and the last end marker, and the `rc=` value. A
/// marker may follow other text on its line (a terminal reset the firmware printed without a
/// newline, a kernel message).
fn cut_job_output(console: &str) -> Option<(String, i32)> {
    let lines: Vec<&str> = console.lines().collect();
    let begin = lines
        .iter()
        .position(|l| l.trim_end().ends_with(BEGIN_MARKER))?;
    let (end, rc) = lines
        .iter()
        .enumerate()
        .skip(begin + 1)
        .rev()
        .find_map(|(i, l)| {
            let at = l.find(END_MARKER)?;
            let digits: String = l[at + END_MARKER.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse::<i32>().ok().map(|rc| (i, rc))
        })?;
    let mut out = String::new();
    for l in &lines[begin + 1..end] {
        out.push_str(l);
        out.push('\n');
    }
    Some((out, rc))
}

fn tail(console: &str) -> String {
    let lines: Vec<&str> = console.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, GuestError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let dir = base.join(format!(
                "zonal-guest-{}-{}-{nanos}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(&base)(e)),
            }
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn markers() {
        let console = "boot\nZONAL-GUEST-BEGIN\na\nb\nZONAL-GUEST-END rc=3\n[ 1.0] reboot\n";
        assert_eq!(cut_job_output(console), Some(("a\nb\n".into(), 3)));
        assert_eq!(
            cut_job_output("ZONAL-GUEST-BEGIN\nZONAL-GUEST-END rc=0\n"),
            Some((String::new(), 0))
        );
        assert_eq!(cut_job_output("ZONAL-GUEST-BEGIN\nx\n"), None);
        // The firmware's terminal reset has no newline; a kernel message may lead a line.
        let console =
            "\x1bc\x1b[?7l\x1b[2JZONAL-GUEST-BEGIN\n21 10\n[ 2.0] x ZONAL-GUEST-END rc=0\n";
        assert_eq!(cut_job_output(console), Some(("21 10\n".into(), 0)));
        assert_eq!(cut_job_output("panic\n"), None);
    }

    #[test]
    fn newest_kernel_by_version() {
        let mut v = [
            "vmlinuz-6.1.0-9-amd64",
            "vmlinuz-6.1.0-10-amd64",
            "vmlinuz-5.10.0-2-amd64",
        ];
        v.sort_by_key(|n| version_key(n));
        assert_eq!(v[2], "vmlinuz-6.1.0-10-amd64");
    }

    #[test]
    fn temp_dirs_are_fresh_and_removed() {
        let a = TempDir::new().unwrap();
        let b = TempDir::new().unwrap();
        assert_ne!(a.0, b.0);
        let p = a.0.clone();
        assert!(p.is_dir());
        drop(a);
        assert!(!p.exists());
    }
}
