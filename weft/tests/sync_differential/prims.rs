//! The primitives under test: each pairs its script generator with its
//! interpreter on Tokio and on weft.

use crate::harness::Prim;
use crate::interp_locks;
use crate::interp_mpsc_oneshot;
use crate::interp_notify_barrier;
use crate::interp_watch_broadcast;
use crate::ops::{
    BarrierCfg, BarrierOp, BcastCfg, BcastOp, MpscCfg, MpscOp, MutexOp, NotifyOp, OneshotOp, RwCfg,
    RwOp, SemCfg, SemOp, WatchOp,
};
use crate::scripts::{
    gen_barrier, gen_broadcast, gen_mpsc, gen_mutex, gen_notify, gen_oneshot, gen_rwlock,
    gen_semaphore, gen_watch,
};

pub const SEMAPHORE: Prim<SemCfg, SemOp> = Prim {
    name: "Semaphore",
    gen: gen_semaphore,
    tokio: interp_locks::on_tokio::semaphore,
    weft: interp_locks::on_weft::semaphore,
};

pub const NOTIFY: Prim<(), NotifyOp> = Prim {
    name: "Notify",
    gen: gen_notify,
    tokio: interp_notify_barrier::on_tokio::notify,
    weft: interp_notify_barrier::on_weft::notify,
};

pub const MUTEX: Prim<(), MutexOp> = Prim {
    name: "Mutex",
    gen: gen_mutex,
    tokio: interp_locks::on_tokio::mutex,
    weft: interp_locks::on_weft::mutex,
};

pub const RWLOCK: Prim<RwCfg, RwOp> = Prim {
    name: "RwLock",
    gen: gen_rwlock,
    tokio: interp_locks::on_tokio::rwlock,
    weft: interp_locks::on_weft::rwlock,
};

pub const MPSC: Prim<MpscCfg, MpscOp> = Prim {
    name: "mpsc (bounded)",
    gen: gen_mpsc,
    tokio: interp_mpsc_oneshot::on_tokio::mpsc,
    weft: interp_mpsc_oneshot::on_weft::mpsc,
};

pub const ONESHOT: Prim<(), OneshotOp> = Prim {
    name: "oneshot",
    gen: gen_oneshot,
    tokio: interp_mpsc_oneshot::on_tokio::oneshot,
    weft: interp_mpsc_oneshot::on_weft::oneshot,
};

pub const WATCH: Prim<(), WatchOp> = Prim {
    name: "watch",
    gen: gen_watch,
    tokio: interp_watch_broadcast::on_tokio::watch,
    weft: interp_watch_broadcast::on_weft::watch,
};

pub const BROADCAST: Prim<BcastCfg, BcastOp> = Prim {
    name: "broadcast",
    gen: gen_broadcast,
    tokio: interp_watch_broadcast::on_tokio::broadcast,
    weft: interp_watch_broadcast::on_weft::broadcast,
};

pub const BARRIER: Prim<BarrierCfg, BarrierOp> = Prim {
    name: "Barrier",
    gen: gen_barrier,
    tokio: interp_notify_barrier::on_tokio::barrier,
    weft: interp_notify_barrier::on_weft::barrier,
};
