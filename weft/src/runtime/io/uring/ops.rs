//! One ring's op table: which operations the kernel holds, and who may
//! free their buffers.
//!
//! Owns: a slot per operation submitted to the ring, holding the
//! operation's buffer and its state, and the `user_data` encoding that
//! names a slot in a completion.
//!
//! Invariants (each transition is one function below; the ring's mutex
//! serialises them, `loom_ops.rs` models the races between a reaper, the
//! op's owner and a canceller; a live send's continuation has unit tests
//! in `ops_tests.rs`, outside the order matrix there):
//! - **A buffer the kernel may write is never freed or handed out.** From
//!   `insert` until the operation's completion arrives (`complete`), its
//!   slot owns the buffer, whatever happens to the future or stream that
//!   started it: dropping the owner turns the slot `Orphaned`, and the
//!   buffer is dropped only when the completion comes in (liburing #733:
//!   the buffer must outlive the request, cancelled or not).
//! - **A completion is delivered once.** `Done` is taken by exactly one
//!   `poll`, which frees the slot; a completion for a free slot or an older
//!   generation (a stale or internal `user_data`) is ignored.
//! - **A descriptor a request created is closed if nobody takes it.** An
//!   op inserted as `SlotKind::MakesFd` (an open) whose owner is
//!   gone when it completes, or gives it up after, hands its result back
//!   for the ring to close: it would otherwise leak.
//! - **A stream's send goes out whole without its writer.** A write
//!   returns once its send is started, and the writer may then wait for
//!   something else (the reply to what it sent). A send the kernel ends
//!   short is continued by whichever thread reaps its completion, from
//!   where it stopped (a [`LiveSend`]), as an orphaned one is; its owner
//!   learns the bytes sent in all, or the error, when it looks.
//! - `user_data` is `index | generation << 32`; the values with all high
//!   bits set are reserved for the ring's own requests (cancels, its poll
//!   on the epoll descriptor), which never name a slot: no slot ever has
//!   the all-ones generation.

use std::task::Waker;

/// Whether a completion's `result` says the kernel interrupted the
/// request (a signal, no room yet, or a cancel its owner did not ask for:
/// the `uring` module doc says when): it did not happen, and every user
/// of the ring issues it again rather than report it.
pub(crate) fn interrupted(result: i32) -> bool {
    matches!(-result, libc::ECANCELED | libc::EINTR | libc::EAGAIN)
}

/// Whether a send the table continues (orphaned, or a [`LiveSend`]) that
/// completed with `result`, having started at `from` of a `len`-byte
/// buffer, has more to send: a short send, or one the kernel interrupted.
fn continues(result: i32, from: usize, len: usize) -> bool {
    match usize::try_from(result) {
        Ok(n) => n > 0 && from + n < len,
        Err(_) => interrupted(result),
    }
}

/// `user_data` of requests that name no slot (the ring's cancels).
pub(crate) const INTERNAL_USER_DATA: u64 = u64::MAX;

/// The name of one submitted operation in its ring's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpKey {
    index: u32,
    generation: u32,
}

impl OpKey {
    pub(crate) fn user_data(self) -> u64 {
        u64::from(self.index) | u64::from(self.generation) << 32
    }

    fn from_user_data(user_data: u64) -> OpKey {
        OpKey {
            index: user_data as u32,
            generation: (user_data >> 32) as u32,
        }
    }
}

#[derive(Default)]
pub(crate) struct OpTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots whose completion has not arrived yet (`InFlight`, `Orphaned`).
    in_flight: usize,
    /// The ring gives its sends up (the end of its teardown): orphaned and
    /// live sends end at their next completion instead of continuing, and
    /// orphaned sends become cancellable.
    closing: bool,
}

struct Slot {
    generation: u32,
    state: State,
    /// What the request is (a descriptor maker, a stream send...): set at
    /// insert, and for a send, how far the table has sent it.
    kind: SlotKind,
}

enum State {
    Free,
    /// The kernel holds the request; `waker` is the task to wake.
    InFlight {
        waker: Option<Waker>,
        buf: Vec<u8>,
    },
    /// The completion arrived; the owner has not taken it yet.
    Done {
        result: i32,
        buf: Vec<u8>,
    },
    /// The owner is gone; the buffer waits for the completion, and
    /// `leave` says what becomes of the request meanwhile.
    Orphaned {
        buf: Vec<u8>,
        leave: Leave,
    },
}

/// What becomes of a request whose owner leaves before taking its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leave {
    /// Cancelled in the kernel (a receive, an open, ...).
    Cancel,
    /// A send the table carries on to its last byte (`OrphanSend`).
    Send(OrphanSend),
    /// Left to run to its end, never cancelled, not even by the ring's
    /// teardown, which waits for it instead (a file write a dropped
    /// `File` accepted).
    Detach,
}

/// A send whose stream was dropped (or whose write half was), finished by
/// the ring on the stream's behalf: the table owns `fd` (a duplicate of
/// the socket), continues short sends from `from`, then shuts the write
/// direction down if asked and closes `fd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OrphanSend {
    pub(crate) fd: std::os::fd::RawFd,
    pub(crate) from: usize,
    pub(crate) shutdown: bool,
}

/// A stream send whose owner is still there (`send.rs`): the table
/// continues it on `fd` (the stream's own socket; its owner abandons the
/// send before closing it) while it ends short, from `from`; `start` is
/// where the owner's send began, so the result it takes counts from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LiveSend {
    pub(crate) fd: std::os::fd::RawFd,
    pub(crate) start: usize,
    pub(crate) from: usize,
}

impl LiveSend {
    /// A send of `buf[from..]` on `fd`.
    pub(crate) fn new(fd: std::os::fd::RawFd, from: usize) -> LiveSend {
        LiveSend {
            fd,
            start: from,
            from,
        }
    }

    /// The result the owner takes for the request's last completion
    /// `result`: bytes sent since `start`, or the error if none were.
    fn owners_result(&self, result: i32) -> i32 {
        let sent_before = self.from - self.start;
        match usize::try_from(result) {
            Ok(n) => i32::try_from(sent_before + n).unwrap_or(i32::MAX),
            // Bytes went out before the failure: report them (a short
            // send), and the error comes back when the owner sends the
            // rest, as a socket's would.
            Err(_) if sent_before > 0 => i32::try_from(sent_before).unwrap_or(i32::MAX),
            Err(_) => result,
        }
    }
}

/// What the ring must do after [`OpTable::complete`].
#[must_use]
#[derive(Debug)]
pub(crate) enum Completed {
    /// Wake the owner (if it left a waker).
    Wake(Option<Waker>),
    /// A send (orphaned, or a [`LiveSend`]) went out short: push a send
    /// of `len` bytes at `ptr` (inside the slot's buffer) on `fd`, named
    /// `key` again.
    Resend {
        key: OpKey,
        fd: std::os::fd::RawFd,
        ptr: *const u8,
        len: usize,
    },
    /// An orphaned send is over: shut down (if asked) and close `fd`.
    Finished(OrphanSend),
    /// An orphaned open created this descriptor: close it.
    CloseFd(std::os::fd::RawFd),
}

/// What [`OpTable::poll`] found.
#[must_use]
#[derive(Debug)]
pub(crate) enum Polled {
    /// The completion: the kernel's result (bytes, or `-errno`) and the
    /// buffer, back with the caller. The slot is free.
    Done { result: i32, buf: Vec<u8> },
    /// Still in the kernel; the waker is stored (by `poll`; `take_done`
    /// leaves the one stored before).
    Pending,
}

/// What [`OpTable::abandon`] asks of the ring.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Abandoned {
    /// It had completed: the slot is free and nothing is left to do.
    Freed,
    /// It had completed with a descriptor nobody took: the slot is free;
    /// close it.
    FreedClosing(std::os::fd::RawFd),
    /// Still in the kernel: submit a cancel for it (or, for a send, let
    /// it finish); the slot frees itself when the completion comes.
    CancelInKernel,
    /// A send that had completed untaken: pass this result to
    /// [`OpTable::complete`] and do what it says.
    Replay(i32),
}

/// What a slot's request is, as far as the table cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotKind {
    Plain,
    /// Its result is a new descriptor, closed if its owner never takes it
    /// (an open).
    MakesFd,
    /// A stream send the table continues while it ends short.
    Send(LiveSend),
}

impl OpTable {
    /// `insert_op` for a request whose result is no descriptor.
    #[cfg(any(test, loom))]
    pub(crate) fn insert(&mut self, buf: Vec<u8>, waker: Option<Waker>) -> OpKey {
        self.insert_op(buf, waker, SlotKind::Plain)
    }

    /// Take a slot for a request about to be submitted with `buf` as its
    /// buffer, of `kind` ([`SlotKind`]). The buffer's heap memory does not move
    /// while the slot holds it (a `Vec` moved between slots keeps its
    /// allocation), so a pointer taken from it before the call stays valid
    /// until the completion.
    pub(crate) fn insert_op(
        &mut self,
        buf: Vec<u8>,
        waker: Option<Waker>,
        kind: SlotKind,
    ) -> OpKey {
        self.in_flight += 1;
        let state = State::InFlight { waker, buf };
        match self.free.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                slot.state = state;
                slot.kind = kind;
                OpKey {
                    index,
                    generation: slot.generation,
                }
            }
            None => {
                let index = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i != u32::MAX)
                    .expect("more than 2^32 io_uring operations in flight on one ring");
                self.slots.push(Slot {
                    generation: 0,
                    state,
                    kind,
                });
                OpKey {
                    index,
                    generation: 0,
                }
            }
        }
    }

    /// A slot whose entry never reached the submission queue (the push
    /// failed): no completion will come, so it is freed now, buffer and
    /// all.
    pub(crate) fn remove_unqueued(&mut self, key: OpKey) {
        let slot = self
            .slot_mut(key)
            .expect("an op removed before it was queued is its starter's");
        assert!(
            matches!(slot.state, State::InFlight { .. }),
            "an op removed before it was queued had not completed"
        );
        self.in_flight -= 1;
        self.release(key);
    }

    fn slot_mut(&mut self, key: OpKey) -> Option<&mut Slot> {
        self.slots
            .get_mut(key.index as usize)
            .filter(|slot| slot.generation == key.generation)
    }

    fn release(&mut self, key: OpKey) {
        let slot = &mut self.slots[key.index as usize];
        slot.state = State::Free;
        // Skip the reserved all-ones generation so no slot's user_data can
        // equal INTERNAL_USER_DATA.
        slot.generation = match slot.generation.wrapping_add(1) {
            u32::MAX => 0,
            g => g,
        };
        self.free.push(key.index);
    }

    /// The owner asks for its result: take it if it is there, otherwise
    /// leave `waker` to be woken by the completion.
    ///
    /// # Panics
    /// If `key` is not an operation its caller owns (freed or abandoned):
    /// a bug in the ring's users.
    pub(crate) fn poll(&mut self, key: OpKey, waker: &Waker) -> Polled {
        self.look(key, Some(waker))
    }

    /// As [`poll`](Self::poll), but the waker stored for the op stays: for
    /// a caller that waits in the ring itself, on behalf of an owner whose
    /// task may be waiting on the op too.
    ///
    /// # Panics
    /// As `poll`.
    pub(crate) fn take_done(&mut self, key: OpKey) -> Polled {
        self.look(key, None)
    }

    /// `poll` (`waker`: the one to store if still pending) or `take_done`.
    fn look(&mut self, key: OpKey, waker: Option<&Waker>) -> Polled {
        let slot = self
            .slot_mut(key)
            .expect("polled an io_uring operation that was already taken or abandoned");
        match &mut slot.state {
            State::InFlight { waker: stored, .. } => {
                if let Some(waker) = waker {
                    if !stored.as_ref().is_some_and(|w| w.will_wake(waker)) {
                        *stored = Some(waker.clone());
                    }
                }
                Polled::Pending
            }
            State::Done { .. } => {
                let State::Done { result, buf } = std::mem::replace(&mut slot.state, State::Free)
                else {
                    unreachable!("matched Done above")
                };
                self.release(key);
                Polled::Done { result, buf }
            }
            State::Free | State::Orphaned { .. } => {
                panic!("polled an io_uring operation that was already taken or abandoned")
            }
        }
    }

    /// The result if the completion arrived (the slot is then free),
    /// without touching the stored waker.
    pub(crate) fn try_take(&mut self, key: OpKey) -> Option<(i32, Vec<u8>)> {
        let slot = self.slot_mut(key)?;
        if !matches!(slot.state, State::Done { .. }) {
            return None;
        }
        let State::Done { result, buf } = std::mem::replace(&mut slot.state, State::Free) else {
            unreachable!("checked Done above")
        };
        self.release(key);
        Some((result, buf))
    }

    /// The owner gives the operation up (its stream or file is dropped),
    /// and `leave` says what becomes of it. A send (`Leave::Send`) the
    /// table finishes; if it had already completed, its `OrphanSend`
    /// comes back for the caller to finish.
    pub(crate) fn abandon(&mut self, key: OpKey, leave: Leave) -> (Abandoned, Option<OrphanSend>) {
        let send = match leave {
            Leave::Send(send) => Some(send),
            Leave::Cancel | Leave::Detach => None,
        };
        let Some(slot) = self.slot_mut(key) else {
            return (Abandoned::Freed, send);
        };
        match std::mem::replace(&mut slot.state, State::Free) {
            State::InFlight { buf, .. } => {
                // A send the table has been continuing: the orphan goes on
                // from where it got to.
                let leave = match (leave, slot.kind) {
                    (Leave::Send(orphan), SlotKind::Send(live)) => Leave::Send(OrphanSend {
                        from: live.from,
                        ..orphan
                    }),
                    (leave, _) => leave,
                };
                slot.state = State::Orphaned { buf, leave };
                (Abandoned::CancelInKernel, None)
            }
            State::Done { result, buf } if send.is_some() => {
                // Completed but not yet taken: the table finishes it as if
                // the completion arrived now (it may need continuing).
                slot.state = State::Orphaned { buf, leave };
                self.in_flight += 1;
                (Abandoned::Replay(result), None)
            }
            State::Done { result, .. } => {
                let fd = (slot.kind == SlotKind::MakesFd && result >= 0).then_some(result);
                self.release(key);
                match fd {
                    Some(fd) => (Abandoned::FreedClosing(fd), send),
                    None => (Abandoned::Freed, send),
                }
            }
            other => {
                slot.state = other;
                (Abandoned::Freed, send)
            }
        }
    }

    /// A completion arrived: record it, and say what the ring must do
    /// (after its lock is released, for a waker).
    pub(crate) fn complete(&mut self, user_data: u64, result: i32) -> Completed {
        if user_data == INTERNAL_USER_DATA {
            return Completed::Wake(None);
        }
        let key = OpKey::from_user_data(user_data);
        let closing = self.closing;
        let Some(slot) = self.slot_mut(key) else {
            return Completed::Wake(None);
        };
        match std::mem::replace(&mut slot.state, State::Free) {
            State::InFlight { waker, buf } => match &mut slot.kind {
                SlotKind::Send(send) if !closing && continues(result, send.from, buf.len()) => {
                    send.from += usize::try_from(result).unwrap_or(0);
                    let rest = &buf[send.from..];
                    let (ptr, len) = (rest.as_ptr(), rest.len());
                    let fd = send.fd;
                    slot.state = State::InFlight { waker, buf };
                    Completed::Resend { key, fd, ptr, len }
                }
                kind => {
                    let result = match kind {
                        SlotKind::Send(send) => send.owners_result(result),
                        SlotKind::Plain | SlotKind::MakesFd => result,
                    };
                    slot.state = State::Done { result, buf };
                    self.in_flight -= 1;
                    Completed::Wake(waker)
                }
            },
            State::Orphaned {
                buf,
                leave: Leave::Send(mut send),
            } if !closing && continues(result, send.from, buf.len()) => {
                send.from += usize::try_from(result).unwrap_or(0);
                let rest = &buf[send.from..];
                let (ptr, len) = (rest.as_ptr(), rest.len());
                slot.state = State::Orphaned {
                    buf,
                    leave: Leave::Send(send),
                };
                Completed::Resend {
                    key,
                    fd: send.fd,
                    ptr,
                    len,
                }
            }
            State::Orphaned { buf, leave } => {
                drop(buf);
                let fd = (slot.kind == SlotKind::MakesFd && result >= 0).then_some(result);
                self.in_flight -= 1;
                self.release(key);
                match (leave, fd) {
                    (Leave::Send(send), _) => Completed::Finished(send),
                    (_, Some(fd)) => Completed::CloseFd(fd),
                    (_, None) => Completed::Wake(None),
                }
            }
            other => {
                // A second completion for one request: not something the
                // ops weft submits produce (none is multishot).
                slot.state = other;
                Completed::Wake(None)
            }
        }
    }

    /// The ring gives up on its sends: orphaned and live sends stop at
    /// their next completion, and become cancellable.
    pub(crate) fn close(&mut self) {
        self.closing = true;
    }

    /// Requests whose completion has not arrived.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The `user_data` of every request still in the kernel that may be
    /// cancelled: all but detached ones and, until [`close`](Self::close),
    /// orphaned sends (their bytes were accepted by a write).
    pub(crate) fn cancellable_user_data(&self) -> impl Iterator<Item = u64> + '_ {
        let closing = self.closing;
        self.slots
            .iter()
            .enumerate()
            .filter(move |(_, slot)| match &slot.state {
                State::InFlight { .. } => true,
                State::Orphaned { leave, .. } => match leave {
                    Leave::Cancel => true,
                    Leave::Send(_) => closing,
                    Leave::Detach => false,
                },
                State::Free | State::Done { .. } => false,
            })
            .map(|(i, slot)| {
                OpKey {
                    index: i as u32,
                    generation: slot.generation,
                }
                .user_data()
            })
    }

    /// Take every stored waker (the runtime shuts down: their tasks must
    /// see the shutdown error instead of waiting for a completion).
    pub(crate) fn take_wakers(&mut self, wakers: &mut Vec<Waker>) {
        for slot in &mut self.slots {
            if let State::InFlight { waker, .. } = &mut slot.state {
                wakers.extend(waker.take());
            }
        }
    }

    /// Give up on requests that never completed: their buffers are leaked,
    /// not freed, because the kernel may still write them.
    pub(crate) fn leak_in_flight(&mut self) {
        for slot in &mut self.slots {
            if let State::InFlight { buf, .. } | State::Orphaned { buf, .. } = &mut slot.state {
                std::mem::forget(std::mem::take(buf));
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
#[path = "ops_tests.rs"]
mod tests;
