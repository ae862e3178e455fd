//! CPU time from the kernel (`getrusage`): the whole process's, and the calling thread's.

use std::time::Duration;

/// Whose CPU time [`cpu_time`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Every thread of the process, those that have exited included (`RUSAGE_SELF`).
    Process,
    /// The calling thread only (`RUSAGE_THREAD`).
    Thread,
}

/// User plus system CPU time used so far by `who`; zero where the kernel refuses.
pub fn cpu_time(who: Who) -> Duration {
    let which = match who {
        Who::Process => libc::RUSAGE_SELF,
        Who::Thread => libc::RUSAGE_THREAD,
    };
    // SAFETY: `rusage` is plain old data, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the duration of the call.
    if unsafe { libc::getrusage(which, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_is_counted_in_its_own_time_and_the_processs() {
        let (p0, t0) = (cpu_time(Who::Process), cpu_time(Who::Thread));
        let mut x = 0u64;
        // Bounded in iterations, so that a kernel that counts nothing fails, not hangs.
        for _ in 0..100_000 {
            if cpu_time(Who::Thread) - t0 >= Duration::from_millis(20) {
                break;
            }
            for i in 0..100_000u64 {
                x = x.wrapping_add(std::hint::black_box(i));
            }
        }
        std::hint::black_box(x);
        assert!(cpu_time(Who::Process) - p0 >= Duration::from_millis(20));
    }
}
