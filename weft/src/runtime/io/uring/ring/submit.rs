//! Handing entries to the kernel: pushing one (making room by submitting),
//! submitting the queue (continuing a batch the kernel took only in part),
//! and what a refused submit leads to, for another thread's start (which
//! no batch point follows) and for an abandon or a cancel. The rule they
//! keep is mod.rs's "A queued entry is a started op".

use super::*;

/// How often [`RingState::submit_queued`] asks before it leaves a queued
/// entry to the ring's next submit.
pub(super) const SUBMIT_TRIES: usize = 4;

/// How long [`Ring::submit_started`] asks the kernel again before a start
/// fails.
pub(super) const SUBMIT_PATIENCE: Duration = Duration::from_secs(1);

/// A submit the kernel refused for want of memory, which it may have
/// again soon.
fn refused_for_now(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM))
}

impl Ring {
    /// Submit the entry of a start by a thread that is not the ring's
    /// owner, whose batch point would otherwise carry it (module doc, "A
    /// queued entry is a started op"). A refusal the kernel may get over
    /// (`EAGAIN`, `ENOMEM`: it could not allocate the request) is tried
    /// again, with the lock let go between tries, for up to
    /// [`SUBMIT_PATIENCE`]; past that, or on another error, the start
    /// fails, and the entry, still queued, keeps its buffer in the table
    /// (orphaned: freed by a completion if it ever reaches the kernel).
    pub(super) fn submit_started<'a>(
        &'a self,
        mut state: Locked<'a>,
        key: OpKey,
        mut wakers: Vec<Waker>,
    ) -> io::Result<OpKey> {
        let started = Instant::now();
        let mut pause = Duration::from_micros(50);
        let result = loop {
            match state.submit(&mut wakers) {
                Ok(()) => break Ok(key),
                Err(e) if refused_for_now(&e) && started.elapsed() < SUBMIT_PATIENCE => {
                    state.reap(&mut wakers);
                    drop(state);
                    wake_all(std::mem::take(&mut wakers));
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(10));
                    state = self.lock();
                }
                Err(e) => {
                    let _ = state.table.abandon(key, Leave::Cancel);
                    break Err(e);
                }
            }
        };
        drop(state);
        wake_all(wakers);
        result
    }
}

impl RingState {
    /// Push one entry, making room by submitting if the queue is full.
    ///
    /// # Safety
    /// Every buffer `entry` points to stays valid until its completion.
    pub(super) unsafe fn push(
        &mut self,
        entry: &squeue::Entry,
        wakers: &mut Vec<Waker>,
    ) -> io::Result<()> {
        loop {
            // SAFETY: the caller's contract.
            if unsafe { self.sq().push(entry) }.is_ok() {
                self.unsubmitted += 1;
                return Ok(());
            }
            self.submit(wakers)?;
        }
    }

    /// Hand every pushed entry to the kernel. `EBUSY` (completions
    /// overflowed) is answered by reaping and trying again.
    pub(super) fn submit(&mut self, wakers: &mut Vec<Waker>) -> io::Result<()> {
        #[cfg(test)]
        if self.refuse_submits > 0 {
            self.refuse_submits -= 1;
            return Err(io::Error::from_raw_os_error(libc::EAGAIN));
        }
        loop {
            match self.uring.submit() {
                Ok(taken) => {
                    // The kernel may take part of the batch: it ran short
                    // of memory, or (without `SUBMIT_ALL`, before Linux
                    // 5.18) stopped after an entry it refused. The rest is
                    // still queued: its count must not say otherwise (a
                    // submit skipped for it would let an entry naming a
                    // descriptor wait past that descriptor's close).
                    let left = self.sq().len();
                    self.unsubmitted = left;
                    if self.unsubmitted == 0 {
                        return Ok(());
                    }
                    if taken == 0 {
                        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => self.reap(wakers),
                Err(e) => return Err(e),
            }
        }
    }

    /// Submit what an abandon or a cancel queued, under the lock: a
    /// refusal the kernel may get over is tried again a few times, and
    /// past that the entries wait for the ring's next submit.
    pub(super) fn submit_queued(&mut self, wakers: &mut Vec<Waker>) {
        for _ in 0..SUBMIT_TRIES {
            match self.submit(wakers) {
                Err(e) if refused_for_now(&e) => {
                    self.reap(wakers);
                    std::thread::yield_now();
                }
                _ => return,
            }
        }
    }
}
