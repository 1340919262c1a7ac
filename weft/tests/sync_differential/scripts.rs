//! The script generators: for each primitive, a random configuration and a
//! random sequence of its ops, drawn with weights from a seeded `Rng` (the
//! same seed always makes the same script).

use crate::harness::{Rng, Script};
use crate::ops::{
    BarrierCfg, BarrierOp, BcastCfg, BcastOp, MpscCfg, MpscOp, MutexOp, NotifyOp, OneshotOp, RwCfg,
    RwOp, SemCfg, SemOp, WatchOp,
};

pub fn gen_semaphore(r: &mut Rng) -> Script<SemCfg, SemOp> {
    let cfg = SemCfg {
        permits: r.below(4) as usize,
    };
    let ops = (0..r.len())
        .map(|_| {
            let n = [1, 1, 1, 2, 3, 0][r.below(6) as usize];
            match r.pick(&[8, 14, 3, 3, 3, 1, 1, 6, 1, 1, 1]) {
                0 => SemOp::Acquire {
                    slot: r.slot(),
                    n,
                    owned: r.coin(),
                },
                1 => SemOp::Poll {
                    slot: r.slot(),
                    fresh: r.below(8) == 0,
                },
                2 => SemOp::DropFut { slot: r.slot() },
                3 => SemOp::TryAcquire { n, owned: r.coin() },
                4 => SemOp::AddPermits {
                    n: r.below(3) as usize + 1,
                },
                5 => SemOp::ForgetPermits {
                    n: r.below(3) as usize,
                },
                // Half as likely as the others of weight 1: a closed
                // semaphore ends most of what a script could still do.
                6 if r.coin() => SemOp::Close,
                6 => SemOp::AddPermits { n: 1 },
                7 => SemOp::Release { h: r.idx() },
                8 => SemOp::Forget { h: r.idx() },
                9 => SemOp::Split {
                    h: r.idx(),
                    n: r.below(3) as usize,
                },
                _ => SemOp::Merge {
                    a: r.idx(),
                    b: r.idx(),
                },
            }
        })
        .collect();
    Script { cfg, ops }
}

pub fn gen_notify(r: &mut Rng) -> Script<(), NotifyOp> {
    let ops = (0..r.len())
        .map(|_| match r.pick(&[8, 3, 12, 3, 4, 2, 3]) {
            0 => NotifyOp::Notified {
                slot: r.slot(),
                owned: r.coin(),
            },
            1 => NotifyOp::Enable { slot: r.slot() },
            2 => NotifyOp::Poll {
                slot: r.slot(),
                fresh: r.below(8) == 0,
            },
            3 => NotifyOp::DropFut { slot: r.slot() },
            4 => NotifyOp::NotifyOne,
            5 => NotifyOp::NotifyLast,
            _ => NotifyOp::NotifyWaiters,
        })
        .collect();
    Script { cfg: (), ops }
}

pub fn gen_mutex(r: &mut Rng) -> Script<(), MutexOp> {
    let ops = (0..r.len())
        .map(|_| match r.pick(&[8, 12, 3, 3, 6, 2]) {
            0 => MutexOp::Lock {
                slot: r.slot(),
                owned: r.coin(),
            },
            1 => MutexOp::Poll {
                slot: r.slot(),
                fresh: r.below(8) == 0,
            },
            2 => MutexOp::DropFut { slot: r.slot() },
            3 => MutexOp::TryLock { owned: r.coin() },
            4 => MutexOp::Release { h: r.idx() },
            _ => MutexOp::Bump { h: r.idx() },
        })
        .collect();
    Script { cfg: (), ops }
}

pub fn gen_rwlock(r: &mut Rng) -> Script<RwCfg, RwOp> {
    let cfg = RwCfg {
        max_readers: 1 + r.below(3) as u32,
    };
    let ops = (0..r.len())
        .map(|_| match r.pick(&[6, 5, 12, 3, 2, 2, 6, 2, 1]) {
            0 => RwOp::Read {
                slot: r.slot(),
                owned: r.coin(),
            },
            1 => RwOp::Write {
                slot: r.slot(),
                owned: r.coin(),
            },
            2 => RwOp::Poll {
                slot: r.slot(),
                fresh: r.below(8) == 0,
            },
            3 => RwOp::DropFut { slot: r.slot() },
            4 => RwOp::TryRead { owned: r.coin() },
            5 => RwOp::TryWrite { owned: r.coin() },
            6 => RwOp::Release { h: r.idx() },
            7 => RwOp::Downgrade { h: r.idx() },
            _ => RwOp::Bump { h: r.idx() },
        })
        .collect();
    Script { cfg, ops }
}

pub fn gen_mpsc(r: &mut Rng) -> Script<MpscCfg, MpscOp> {
    let cfg = MpscCfg {
        cap: 1 + r.below(3) as usize,
    };
    let tx = |r: &mut Rng| r.below(3) as usize;
    let ops = (0..r.len())
        .map(
            |_| match r.pick(&[6, 3, 2, 1, 1, 4, 1, 14, 3, 4, 1, 2, 1, 2, 2, 2, 1, 3, 1, 1]) {
                0 => MpscOp::Send {
                    slot: r.slot(),
                    tx: tx(r),
                },
                1 => MpscOp::Reserve {
                    slot: r.slot(),
                    tx: tx(r),
                },
                2 => MpscOp::ReserveUse {
                    slot: r.slot(),
                    tx: tx(r),
                    send: r.coin(),
                },
                3 => MpscOp::ReserveMany {
                    slot: r.slot(),
                    tx: tx(r),
                    n: r.below(4) as usize,
                    k: r.below(3) as usize,
                },
                4 => MpscOp::Closed {
                    slot: r.slot(),
                    tx: tx(r),
                },
                5 => MpscOp::Recv { slot: r.slot() },
                6 => MpscOp::RecvMany {
                    slot: r.slot(),
                    limit: r.below(4) as usize,
                },
                7 => MpscOp::Poll {
                    slot: r.slot(),
                    fresh: r.below(8) == 0,
                },
                8 => MpscOp::DropFut { slot: r.slot() },
                9 => MpscOp::TrySend { tx: tx(r) },
                10 => MpscOp::TryReserve {
                    tx: tx(r),
                    send: r.coin(),
                },
                11 => MpscOp::TryReserveOwned { tx: tx(r) },
                12 => MpscOp::TryReserveMany {
                    tx: tx(r),
                    n: r.below(4) as usize,
                    k: r.below(3) as usize,
                },
                13 => MpscOp::PermitSend { h: r.idx() },
                14 => MpscOp::PermitDrop {
                    h: r.idx(),
                    release: r.coin(),
                },
                15 => MpscOp::CloneTx {
                    from: tx(r),
                    to: tx(r),
                },
                16 => MpscOp::DropTx { tx: tx(r) },
                17 => MpscOp::TryRecv,
                // Closing ends most of what a script could still do: half
                // as likely as the other ops of weight 1.
                18 if r.coin() => MpscOp::RxClose,
                19 if r.coin() => MpscOp::DropRx,
                18 | 19 => MpscOp::TryRecv,
                _ => unreachable!(),
            },
        )
        .collect();
    Script { cfg, ops }
}

pub fn gen_oneshot(r: &mut Rng) -> Script<(), OneshotOp> {
    let ops = (0..r.len().min(20))
        .map(|_| match r.pick(&[2, 1, 3, 4, 8, 2, 3, 1, 1]) {
            0 => OneshotOp::Send {
                v: r.below(100) as u32,
            },
            1 => OneshotOp::DropTx,
            2 => OneshotOp::Closed { slot: r.slot() },
            3 => OneshotOp::Recv { slot: r.slot() },
            4 => OneshotOp::Poll {
                slot: r.slot(),
                fresh: r.below(8) == 0,
            },
            5 => OneshotOp::DropFut { slot: r.slot() },
            6 => OneshotOp::TryRecv,
            7 => OneshotOp::RxClose,
            _ => OneshotOp::DropRx,
        })
        .collect();
    Script { cfg: (), ops }
}

pub fn gen_watch(r: &mut Rng) -> Script<(), WatchOp> {
    let two = |r: &mut Rng| r.below(2) as usize;
    let three = |r: &mut Rng| r.below(3) as usize;
    let ops = (0..r.len())
        .map(|_| {
            let v = r.below(4) as u32;
            match r.pick(&[4, 1, 1, 2, 1, 2, 2, 2, 1, 1, 4, 2, 1, 12, 2, 2, 1, 1, 1, 1]) {
                0 => WatchOp::Send { tx: two(r), v },
                1 => WatchOp::SendReplace { tx: two(r), v },
                2 => WatchOp::SendModify { tx: two(r), v },
                3 => WatchOp::SendIfModified { tx: two(r), v },
                4 => WatchOp::TxBorrow { tx: two(r) },
                5 => WatchOp::Borrow { rx: three(r) },
                6 => WatchOp::BorrowAndUpdate { rx: three(r) },
                7 => WatchOp::HasChanged { rx: three(r) },
                8 => WatchOp::MarkChanged { rx: three(r) },
                9 => WatchOp::MarkUnchanged { rx: three(r) },
                10 => WatchOp::Changed {
                    slot: r.slot(),
                    rx: three(r),
                },
                11 => WatchOp::WaitFor {
                    slot: r.slot(),
                    rx: three(r),
                    min: v,
                },
                12 => WatchOp::TxClosed {
                    slot: r.slot(),
                    tx: two(r),
                },
                13 => WatchOp::Poll {
                    slot: r.slot(),
                    fresh: r.below(8) == 0,
                },
                14 => WatchOp::DropFut { slot: r.slot() },
                15 => WatchOp::Subscribe {
                    tx: two(r),
                    rx: three(r),
                },
                16 => WatchOp::CloneRx {
                    from: three(r),
                    to: three(r),
                },
                17 => WatchOp::DropRx { rx: three(r) },
                18 => WatchOp::CloneTx {
                    from: two(r),
                    to: two(r),
                },
                _ => WatchOp::DropTx { tx: two(r) },
            }
        })
        .collect();
    Script { cfg: (), ops }
}

pub fn gen_broadcast(r: &mut Rng) -> Script<BcastCfg, BcastOp> {
    let cfg = BcastCfg {
        cap: 1 + r.below(5) as usize,
    };
    let two = |r: &mut Rng| r.below(2) as usize;
    let three = |r: &mut Rng| r.below(3) as usize;
    let ops = (0..r.len())
        .map(|_| match r.pick(&[8, 2, 1, 1, 1, 1, 6, 5, 1, 12, 2]) {
            0 => BcastOp::Send { tx: two(r) },
            1 => BcastOp::Subscribe {
                tx: two(r),
                rx: three(r),
            },
            2 => BcastOp::Resubscribe {
                from: three(r),
                to: three(r),
            },
            3 => BcastOp::DropRx { rx: three(r) },
            4 => BcastOp::CloneTx {
                from: two(r),
                to: two(r),
            },
            5 => BcastOp::DropTx { tx: two(r) },
            6 => BcastOp::TryRecv { rx: three(r) },
            7 => BcastOp::Recv {
                slot: r.slot(),
                rx: three(r),
            },
            8 => BcastOp::Closed {
                slot: r.slot(),
                tx: two(r),
            },
            9 => BcastOp::Poll {
                slot: r.slot(),
                fresh: r.below(8) == 0,
            },
            _ => BcastOp::DropFut { slot: r.slot() },
        })
        .collect();
    Script { cfg, ops }
}

pub fn gen_barrier(r: &mut Rng) -> Script<BarrierCfg, BarrierOp> {
    let cfg = BarrierCfg {
        n: r.below(4) as usize,
    };
    let ops = (0..r.len())
        .map(|_| match r.pick(&[1, 2]) {
            0 => BarrierOp::Wait { slot: r.slot() },
            _ => BarrierOp::Poll {
                slot: r.slot(),
                fresh: r.below(8) == 0,
            },
        })
        .collect();
    Script { cfg, ops }
}
