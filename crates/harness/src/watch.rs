//! Watching one running child from the calling thread until it has exited and its output is
//! read: one `poll` over its output pipes, a pidfd that turns readable at its exit, and its
//! deadline. No helper thread per run, so nothing of the harness competes with a short benchmark
//! for the CPU while it runs (on a 2-core runner, three threads per run did).

use std::io::{self, Read};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags, Signal, kill_process_group, pidfd_open};

use crate::capture::{Capture, Captured};
use crate::clock::monotonic_now;
use crate::disk::{DiskGuard, EVERY};

/// One output stream of the child: its pipe while it is open, and what is kept of it.
#[derive(Debug)]
pub(crate) struct Stream {
    pipe: Option<io::PipeReader>,
    capture: Capture,
}

impl Stream {
    /// A stream read from `pipe` into `capture`; `None`: not piped, comes back empty.
    pub(crate) fn new(pipe: Option<io::PipeReader>, capture: Capture) -> Self {
        Stream { pipe, capture }
    }

    /// One read, which poll said will not block; end of file closes the pipe.
    fn read_ready(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let Some(pipe) = &mut self.pipe else {
            return Ok(());
        };
        match pipe.read(buf) {
            Ok(0) => self.pipe = None,
            Ok(n) => self.capture.push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// What the child did until its end.
#[derive(Debug)]
pub(crate) struct Watched {
    /// When its exit was seen, on CLOCK_MONOTONIC ([`monotonic_now`]).
    pub exited_at: Duration,
    /// The deadline passed and its process group was killed.
    pub timed_out: bool,
    /// Its disk guard stopped it (the group was killed), in words.
    pub disk_stop: Option<String>,
    pub streams: [Captured; 2],
}

/// Slot of the pidfd among the polled descriptors, after the two streams.
const EXIT: usize = 2;

/// Watches the child `pid` until it has exited and its streams are at end of file; at
/// `deadline` its process group is killed, and when `guard` sees the disk limit or a nearly full
/// disk (checked every [`EVERY`] while it runs). The child stays unreaped (a zombie keeps its
/// process-group id reserved while the group may be signalled); its group is killed when it
/// exits, since leftovers would hold the pipes and disturb the next run.
pub(crate) fn watch(
    pid: Pid,
    deadline: Option<Instant>,
    guard: Option<&DiskGuard>,
    mut streams: [Stream; 2],
) -> io::Result<Watched> {
    let exit = pidfd_open(pid, PidfdFlags::empty())?;
    let mut exited_at = None;
    let mut timed_out = false;
    let mut disk_stop = None;
    // A pipe holds 64 KiB by default: one read empties it.
    let mut buf = [0u8; 64 << 10];
    loop {
        let open = streams.iter().any(|s| s.pipe.is_some());
        if exited_at.is_some() && !open {
            break;
        }
        if !timed_out && deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = kill_process_group(pid, Signal::KILL);
            timed_out = true;
        }
        let guarding = guard.filter(|_| exited_at.is_none() && disk_stop.is_none());
        if let Some(reason) = guarding.and_then(DiskGuard::breach) {
            let _ = kill_process_group(pid, Signal::KILL);
            disk_stop = Some(reason);
        }
        // Killed at the deadline and gone, yet its pipes are open: a process outside its group
        // holds them. Take what is buffered, without waiting for that process.
        let last_pass = exited_at.is_some() && timed_out;
        let wait = match deadline {
            _ if last_pass => Some(Duration::ZERO),
            Some(deadline) if !timed_out => {
                Some(deadline.saturating_duration_since(Instant::now()))
            }
            _ => None,
        };
        let wait = match (wait, guarding.is_some() && !last_pass) {
            (Some(w), true) => Some(w.min(EVERY)),
            (None, true) => Some(EVERY),
            (w, false) => w,
        };
        // A wait too long for a timespec is a wait without end.
        let wait = wait.and_then(|w| Timespec::try_from(w).ok());

        let mut ready = [false; 3];
        {
            let mut fds = Vec::with_capacity(3);
            let mut slots = Vec::with_capacity(3);
            for (slot, stream) in streams.iter().enumerate() {
                if let Some(pipe) = &stream.pipe {
                    fds.push(PollFd::new(pipe, PollFlags::IN));
                    slots.push(slot);
                }
            }
            if exited_at.is_none() {
                fds.push(PollFd::new(&exit, PollFlags::IN));
                slots.push(EXIT);
            }
            match poll(&mut fds, wait.as_ref()) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            for (fd, slot) in fds.iter().zip(slots) {
                ready[slot] = !fd.revents().is_empty();
            }
        }

        if ready[EXIT] {
            exited_at = Some(monotonic_now());
            let _ = kill_process_group(pid, Signal::KILL);
        }
        for (stream, ready) in streams.iter_mut().zip(ready) {
            if ready {
                stream.read_ready(&mut buf)?;
            }
        }
        if last_pass {
            break;
        }
    }
    Ok(Watched {
        exited_at: exited_at.expect("the loop ends only after the exit"),
        timed_out,
        disk_stop,
        streams: streams.map(|s| s.capture.finish()),
    })
}
