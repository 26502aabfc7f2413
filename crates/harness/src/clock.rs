//! The ends of a run's wall clock. The start is read by the child itself, right before it
//! execs, and sent to the harness through a pipe, so the harness's own work to start it (the
//! fork, the child's setup between fork and exec) is not measured as the benchmark's; the end is
//! when the harness sees the exit. Both read CLOCK_MONOTONIC, one clock for every process of
//! the machine.

use std::io::Read;
use std::os::fd::RawFd;
use std::time::Duration;

/// CLOCK_MONOTONIC now, as the time since its fixed origin (boot).
pub(crate) fn monotonic_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a local; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Writes CLOCK_MONOTONIC to `fd`, in the child between fork and exec: two async-signal-safe
/// system calls, no allocation. A failed write leaves the harness with its own earlier start.
pub(crate) fn send_exec_moment(fd: RawFd) {
    let nanos = monotonic_now().as_nanos() as u64;
    let bytes = nanos.to_ne_bytes();
    // SAFETY: a valid buffer of 8 bytes; `fd` is the write end the closure owns.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

/// The moment the child sent, read once its exec has closed the pipe's last write end; `None`
/// if it sent none.
pub(crate) fn received_exec_moment(mut pipe: impl Read) -> Option<Duration> {
    let mut bytes = [0u8; 8];
    pipe.read_exact(&mut bytes).ok()?;
    Some(Duration::from_nanos(u64::from_ne_bytes(bytes)))
}
