//! The ops of each primitive's scripts (one enum a primitive, each with a
//! `Poll { slot, fresh }` op), and the configurations a script starts from
//! (initial permits, capacity, ...).

use crate::harness::PollOp;

macro_rules! poll_op {
    ($t:ident) => {
        impl PollOp for $t {
            fn poll(slot: usize) -> Self {
                $t::Poll { slot, fresh: false }
            }
        }
    };
}

#[derive(Clone, Copy, Debug)]
pub struct SemCfg {
    pub permits: usize,
}

#[derive(Clone, Copy, Debug)]
pub enum SemOp {
    /// `acquire` (n = 1) or `acquire_many(n)`, borrowed or `_owned`.
    Acquire {
        slot: usize,
        n: u32,
        owned: bool,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    TryAcquire {
        n: u32,
        owned: bool,
    },
    AddPermits {
        n: usize,
    },
    ForgetPermits {
        n: usize,
    },
    Close,
    /// Drop held permit h.
    Release {
        h: usize,
    },
    /// `forget()` held permit h.
    Forget {
        h: usize,
    },
    Split {
        h: usize,
        n: usize,
    },
    Merge {
        a: usize,
        b: usize,
    },
}
poll_op!(SemOp);

#[derive(Clone, Copy, Debug)]
pub enum NotifyOp {
    Notified {
        slot: usize,
        owned: bool,
    },
    Enable {
        slot: usize,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    NotifyOne,
    NotifyLast,
    NotifyWaiters,
}
poll_op!(NotifyOp);

#[derive(Clone, Copy, Debug)]
pub enum MutexOp {
    Lock {
        slot: usize,
        owned: bool,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    TryLock {
        owned: bool,
    },
    /// Drop held guard h.
    Release {
        h: usize,
    },
    /// `*guard += 1` on held guard h.
    Bump {
        h: usize,
    },
}
poll_op!(MutexOp);

#[derive(Clone, Copy, Debug)]
pub struct RwCfg {
    pub max_readers: u32,
}

#[derive(Clone, Copy, Debug)]
pub enum RwOp {
    Read {
        slot: usize,
        owned: bool,
    },
    Write {
        slot: usize,
        owned: bool,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    TryRead {
        owned: bool,
    },
    TryWrite {
        owned: bool,
    },
    Release {
        h: usize,
    },
    Downgrade {
        h: usize,
    },
    Bump {
        h: usize,
    },
}
poll_op!(RwOp);

#[derive(Clone, Copy, Debug)]
pub struct MpscCfg {
    pub cap: usize,
}

#[derive(Clone, Copy, Debug)]
pub enum MpscOp {
    /// `send` on a clone of sender tx (the clone lives in the future).
    Send {
        slot: usize,
        tx: usize,
    },
    /// `reserve_owned` on a clone of sender tx.
    Reserve {
        slot: usize,
        tx: usize,
    },
    /// `reserve()`, then the permit is used at once (`send`) or dropped.
    ReserveUse {
        slot: usize,
        tx: usize,
        send: bool,
    },
    /// `reserve_many(n)`, then `k` of the permits send, the rest drop.
    ReserveMany {
        slot: usize,
        tx: usize,
        n: usize,
        k: usize,
    },
    Closed {
        slot: usize,
        tx: usize,
    },
    Recv {
        slot: usize,
    },
    RecvMany {
        slot: usize,
        limit: usize,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    TrySend {
        tx: usize,
    },
    TryReserve {
        tx: usize,
        send: bool,
    },
    TryReserveOwned {
        tx: usize,
    },
    TryReserveMany {
        tx: usize,
        n: usize,
        k: usize,
    },
    /// `send` on held `OwnedPermit` h.
    PermitSend {
        h: usize,
    },
    /// Drop (or `release()`) held `OwnedPermit` h.
    PermitDrop {
        h: usize,
        release: bool,
    },
    CloneTx {
        from: usize,
        to: usize,
    },
    DropTx {
        tx: usize,
    },
    TryRecv,
    RxClose,
    DropRx,
}
poll_op!(MpscOp);

#[derive(Clone, Copy, Debug)]
pub enum OneshotOp {
    Send {
        v: u32,
    },
    DropTx,
    /// `Sender::closed()`.
    Closed {
        slot: usize,
    },
    /// Await the receiver (if `is_terminated()` is false).
    Recv {
        slot: usize,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    TryRecv,
    RxClose,
    DropRx,
}
poll_op!(OneshotOp);

#[derive(Clone, Copy, Debug)]
pub enum WatchOp {
    Send {
        tx: usize,
        v: u32,
    },
    SendReplace {
        tx: usize,
        v: u32,
    },
    SendModify {
        tx: usize,
        v: u32,
    },
    /// `send_if_modified`: modifies (and returns true) iff the value is not v.
    SendIfModified {
        tx: usize,
        v: u32,
    },
    TxBorrow {
        tx: usize,
    },
    Borrow {
        rx: usize,
    },
    BorrowAndUpdate {
        rx: usize,
    },
    HasChanged {
        rx: usize,
    },
    MarkChanged {
        rx: usize,
    },
    MarkUnchanged {
        rx: usize,
    },
    Changed {
        slot: usize,
        rx: usize,
    },
    WaitFor {
        slot: usize,
        rx: usize,
        min: u32,
    },
    TxClosed {
        slot: usize,
        tx: usize,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
    Subscribe {
        tx: usize,
        rx: usize,
    },
    CloneRx {
        from: usize,
        to: usize,
    },
    DropRx {
        rx: usize,
    },
    CloneTx {
        from: usize,
        to: usize,
    },
    DropTx {
        tx: usize,
    },
}
poll_op!(WatchOp);

#[derive(Clone, Copy, Debug)]
pub struct BcastCfg {
    pub cap: usize,
}

#[derive(Clone, Copy, Debug)]
pub enum BcastOp {
    Send {
        tx: usize,
    },
    Subscribe {
        tx: usize,
        rx: usize,
    },
    Resubscribe {
        from: usize,
        to: usize,
    },
    DropRx {
        rx: usize,
    },
    CloneTx {
        from: usize,
        to: usize,
    },
    DropTx {
        tx: usize,
    },
    TryRecv {
        rx: usize,
    },
    Recv {
        slot: usize,
        rx: usize,
    },
    Closed {
        slot: usize,
        tx: usize,
    },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll {
        slot: usize,
        fresh: bool,
    },
    DropFut {
        slot: usize,
    },
}
poll_op!(BcastOp);

#[derive(Clone, Copy, Debug)]
pub struct BarrierCfg {
    pub n: usize,
}

#[derive(Clone, Copy, Debug)]
pub enum BarrierOp {
    /// `wait()` into an empty slot (a pending wait is never dropped: Tokio
    /// documents `wait` as not cancel safe).
    Wait { slot: usize },
    /// Poll the future in `slot` (with a new waker if `fresh`).
    Poll { slot: usize, fresh: bool },
}
poll_op!(BarrierOp);
