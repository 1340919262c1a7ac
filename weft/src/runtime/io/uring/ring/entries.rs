//! The submission entry each kind of op starts with: which opcode, which
//! flags, and which part of the op's buffer the kernel may write or read.
//! Every builder hands its entry to `Ring::start` (mod.rs), whose
//! invariant it relies on: the entry points only into the buffer the
//! op's table slot owns.

use super::*;

impl Ring {
    /// Start a `recv(2)` of up to `len` bytes from `fd` into `buf`'s spare
    /// capacity; `waker` is woken when it completes. `submit_now` for a
    /// caller that is not this ring's owner (see the module doc).
    ///
    /// `expect_wait`: the socket is probably empty (its last receive
    /// drained it), so the kernel should arm its poll at once instead of
    /// first trying a receive that fails with `EAGAIN`
    /// (`IORING_RECVSEND_POLL_FIRST`, where the kernel has it).
    pub(crate) fn start_recv(
        &self,
        fd: RawFd,
        mut buf: Vec<u8>,
        len: usize,
        waker: &Waker,
        submit_now: bool,
        expect_wait: bool,
    ) -> io::Result<OpKey> {
        let (ptr, len) = spare_room(&mut buf, len);
        let ioprio = if expect_wait && self.poll_first {
            RECVSEND_POLL_FIRST
        } else {
            0
        };
        let entry = opcode::Recv::new(types::Fd(fd), ptr, len)
            .ioprio(ioprio)
            .build();
        // SAFETY: the entry points at `len` bytes of `buf`'s allocation,
        // which `start` hands to the op's table slot.
        unsafe { self.start(entry, buf, Some(waker), submit_now) }
    }

    /// Start a `send(2)` of `buf[from..]` on `fd` (`MSG_NOSIGNAL`: a peer
    /// that is gone is an `EPIPE` error, never a signal; `MSG_WAITALL`: the
    /// kernel sends the rest of a short one itself, on stream sockets
    /// since Linux 5.18, even while no thread of the runtime runs, say
    /// after `block_on` returned; where it does not, or a send still ends
    /// short, the table continues it, ops.rs `LiveSend`). `waker: None`
    /// for a send nobody waits on yet (a write that returned at once):
    /// its completion then wakes no task, and a later poll leaves one.
    pub(crate) fn start_send(
        &self,
        fd: RawFd,
        buf: Vec<u8>,
        from: usize,
        waker: Option<&Waker>,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        let rest = &buf[from..];
        let len = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        let entry = opcode::Send::new(types::Fd(fd), rest.as_ptr(), len)
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build();
        // The table sends the rest of a short one (ops.rs, `LiveSend`).
        let kind = SlotKind::Send(LiveSend::new(fd, from));
        // SAFETY: as in `start_recv`: `len` bytes inside `buf`'s allocation.
        unsafe { self.start_op(entry, buf, waker, submit_now, kind) }
    }

    /// Start a `read(2)` of up to `len` bytes from the file `fd` at its
    /// own cursor into `buf`'s spare capacity (as `start_recv`: `buf` is
    /// cleared first, and nothing is zeroed).
    pub(crate) fn start_read(
        &self,
        fd: RawFd,
        mut buf: Vec<u8>,
        len: usize,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        let (ptr, len) = spare_room(&mut buf, len);
        // Offset -1: the file's own position, used and advanced as by
        // read(2) (IORING_FEAT_RW_CUR_POS, which the probe requires).
        let entry = opcode::Read::new(types::Fd(fd), ptr, len)
            .offset(u64::MAX)
            .build();
        // SAFETY: the entry points at `len` bytes of `buf`'s allocation.
        unsafe { self.start(entry, buf, Some(waker), submit_now) }
    }

    /// Start a `write(2)` of `buf[range]` to the file `fd` at its own
    /// cursor (`waker` as for [`Ring::start_send`]). `waited`: a task
    /// waits for it; if not, it is submitted when its owner leaves the
    /// runtime (see [`Ring::submit_pending`]) even though `waker` (a
    /// write's ticket, fs/write_order.rs) is there.
    pub(crate) fn start_write(
        &self,
        fd: RawFd,
        buf: Vec<u8>,
        range: std::ops::Range<usize>,
        waker: Option<&Waker>,
        waited: bool,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        let rest = &buf[range];
        let len = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        let entry = opcode::Write::new(types::Fd(fd), rest.as_ptr(), len)
            .offset(u64::MAX)
            .build();
        // SAFETY: `len` bytes inside `buf`'s allocation.
        let key = unsafe { self.start(entry, buf, waker, submit_now) }?;
        if !waited && !submit_now && waker.is_some() {
            self.unwaited_pushed.store(true, Ordering::Relaxed);
        }
        Ok(key)
    }

    /// Start `call` on the NUL-terminated path(s) in `paths` (relative
    /// paths from the working directory; path.rs). An open's result is
    /// the new descriptor, which the table closes if the op's owner gives
    /// it up.
    pub(crate) fn start_path(
        &self,
        call: super::super::path::PathCall,
        paths: Vec<u8>,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        use super::super::path::PathCall;
        debug_assert_eq!(paths.last(), Some(&0), "a path must end in NUL");
        let cwd = types::Fd(libc::AT_FDCWD);
        let path = paths.as_ptr().cast::<libc::c_char>();
        let entry = match call {
            PathCall::Open { flags, mode } => opcode::OpenAt::new(cwd, path)
                .flags(flags)
                .mode(mode)
                .build(),
            PathCall::Remove { dir } => opcode::UnlinkAt::new(cwd, path)
                .flags(if dir { libc::AT_REMOVEDIR } else { 0 })
                .build(),
            PathCall::CreateDir { mode } => opcode::MkDirAt::new(cwd, path).mode(mode).build(),
            PathCall::Rename { to } => {
                assert!(to < paths.len(), "the new path lies inside the buffer");
                // SAFETY: `to` is inside `paths` (asserted).
                let new = unsafe { path.add(to) };
                opcode::RenameAt::new(cwd, path, cwd, new).build()
            }
        };
        let kind = match call {
            PathCall::Open { .. } => SlotKind::MakesFd,
            _ => SlotKind::Plain,
        };
        // SAFETY: the entry points at paths inside `paths`' allocation.
        unsafe { self.start_op(entry, paths, Some(waker), submit_now, kind) }
    }

    /// Start an `fsync(2)` (`data_only`: `fdatasync(2)`) of the file `fd`.
    pub(crate) fn start_fsync(
        &self,
        fd: RawFd,
        data_only: bool,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        let flags = if data_only {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        let entry = opcode::Fsync::new(types::Fd(fd)).flags(flags).build();
        // SAFETY: an fsync points at no memory.
        unsafe { self.start(entry, Vec::new(), Some(waker), submit_now) }
    }

    /// Start a `connect(2)` of the socket `fd` to the `sockaddr` in
    /// `addr` (all of it).
    pub(crate) fn start_connect(
        &self,
        fd: RawFd,
        addr: Vec<u8>,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        let len = libc::socklen_t::try_from(addr.len()).expect("a sockaddr fits socklen_t");
        let entry = opcode::Connect::new(types::Fd(fd), addr.as_ptr().cast(), len).build();
        // SAFETY: the entry points at the address inside `addr`'s
        // allocation.
        unsafe { self.start(entry, addr, Some(waker), submit_now) }
    }

    /// Start a one-shot poll for `events` (`poll(2)` bits) on `fd`; its
    /// result is the events that were ready (poll.rs).
    pub(crate) fn start_poll(
        &self,
        fd: RawFd,
        events: u32,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        let entry = opcode::PollAdd::new(types::Fd(fd), events).build();
        // SAFETY: a poll points at no memory.
        unsafe { self.start(entry, Vec::new(), Some(waker), submit_now) }
    }
}
