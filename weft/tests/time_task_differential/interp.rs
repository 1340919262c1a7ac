//! The interpreter: runs a script on a paused `current_thread` runtime and
//! returns its log. Written once in `interpreter!`, expanded twice: in
//! `on_tokio` (with `k` = `tokio`) and in `on_weft` (with `k` = `weft`), so
//! both runtimes run the very same code.
//!
//! Every task is a boxed future made by `task(cx, id)`; it logs `Start`
//! (with what `task::try_id()` says), one entry per step (a few steps log
//! more before it: an interval's ticks, `Advancing` before each
//! `advance`, an error's text), then `End`. A guard created with the
//! future (before its first poll) logs `Dropped` if the future goes away
//! unfinished, so an abort before the first poll is seen too. Spawned
//! tasks return their script id, which joiners check; join errors are
//! placed by `JoinError::id()` against the ids the spawner kept.

macro_rules! interpreter {
    () => {
        use crate::log::{Entry, Ev, IdCheck, JoinOut, Log};
        use crate::script::{Behavior, Fut, ResetWhen, Root, Script, Start, Step, Us, Work, FAR};
        use k::task::{AbortHandle, JoinError, JoinHandle, JoinSet};
        use k::time::{self, Instant, MissedTickBehavior};
        use std::future::{poll_fn, Future};
        use std::pin::Pin;
        use std::sync::Arc;
        use std::task::Poll;
        use std::time::Duration;

        type BoxFut<T> = Pin<Box<dyn Future<Output = T> + Send>>;

        /// Runs `script` on a fresh paused runtime; returns what it logged.
        pub fn run(script: &Script) -> Vec<Entry> {
            super::quiet_scripted_panics();
            let rt = k::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .unwrap();
            let log = Log::default();
            let script = Arc::new(script.clone());
            rt.block_on(async {
                let root = script.root;
                let cx = Cx {
                    ids: Arc::new(std::sync::Mutex::new(vec![None; script.tasks.len()])),
                    script,
                    log: log.clone(),
                    start: Instant::now(),
                };
                match root {
                    Root::BlockOn => {
                        task(cx, 0).await;
                    }
                    Root::Spawned => {
                        let ids = cx.ids.clone();
                        let h = k::spawn(task(cx, 0));
                        ids.lock().unwrap()[0] = Some(h.id());
                        h.await.unwrap();
                    }
                }
            });
            log.end();
            drop(rt);
            log.take()
        }

        #[derive(Clone)]
        struct Cx {
            script: Arc<Script>,
            log: Log,
            start: Instant,
            /// The id of each spawned task's handle, by script task id.
            ids: Arc<std::sync::Mutex<Vec<Option<k::task::Id>>>>,
        }

        impl Cx {
            fn now(&self) -> u64 {
                self.us(Instant::now())
            }

            fn us(&self, at: Instant) -> u64 {
                at.duration_since(self.start).as_micros() as u64
            }

            fn at(&self, us: Us) -> Instant {
                self.start + Duration::from_micros(us)
            }

            /// Logs a join error's or timeout error's `Display` and
            /// `Debug`, task ids replaced by `#` (they differ by crate).
            fn text(
                &self,
                task: usize,
                step: usize,
                e: &(impl std::fmt::Display + std::fmt::Debug),
            ) {
                let hide = |s: String| {
                    let mut out = String::new();
                    for c in s.chars() {
                        if !c.is_ascii_digit() {
                            out.push(c);
                        } else if !out.ends_with('#') {
                            out.push('#');
                        }
                    }
                    out
                };
                let text = format!("{} / {}", hide(e.to_string()), hide(format!("{e:?}")));
                self.log(task, Some(step), Ev::Text(text));
            }

            fn log(&self, task: usize, step: Option<usize>, ev: Ev) {
                self.log.push(Some(self.now()), task, step, ev);
            }
        }

        fn dur(us: Us) -> Duration {
            if us == FAR {
                Duration::MAX
            } else {
                Duration::from_micros(us)
            }
        }

        /// Logs `Dropped` unless disarmed (the task returned).
        struct Guard {
            cx: Cx,
            id: usize,
            armed: bool,
        }

        impl Drop for Guard {
            fn drop(&mut self) {
                if self.armed {
                    let t = (!self.cx.log.ended()).then(|| self.cx.now());
                    self.cx.log.push(t, self.id, None, Ev::Dropped);
                }
            }
        }

        /// What a task holds between steps.
        #[derive(Default)]
        struct Held {
            handles: Vec<(usize, JoinHandle<usize>)>,
            detached: Vec<(usize, AbortHandle)>,
            set: JoinSet<usize>,
            /// Set members not joined yet, with the handle `spawn` returned.
            members: Vec<(usize, AbortHandle)>,
        }

        fn task(cx: Cx, id: usize) -> BoxFut<usize> {
            let guard = Guard {
                cx: cx.clone(),
                id,
                armed: true,
            };
            Box::pin(async move {
                let mut guard = guard;
                let ids = IdCheck::of(k::task::try_id(), cx.ids.lock().unwrap()[id]);
                cx.log(id, None, Ev::Start(ids));
                let mut held = Held::default();
                let steps = cx.script.tasks[id].clone();
                for (i, s) in steps.iter().enumerate() {
                    let ev = step(&cx, id, i, &mut held, s).await;
                    cx.log(id, Some(i), ev);
                }
                // The set's drop aborts its members: say so first.
                let members: Vec<usize> = held.members.iter().map(|m| m.0).collect();
                if !members.is_empty() {
                    cx.log(id, None, Ev::Aborted(members));
                }
                drop(held);
                guard.armed = false;
                cx.log(id, None, Ev::End);
                id
            })
        }

        fn fut(cx: &Cx, f: Fut) -> BoxFut<()> {
            match f {
                Fut::Sleep(d) => Box::pin(time::sleep(dur(d))),
                Fut::Until(a) => Box::pin(time::sleep_until(cx.at(a))),
                Fut::Yield => Box::pin(k::task::yield_now()),
                Fut::Never => Box::pin(std::future::pending()),
            }
        }

        /// Polls `f` once; true if it was ready.
        async fn poll_once<F: Future + Unpin>(f: &mut F) -> bool {
            poll_fn(|c| Poll::Ready(Pin::new(&mut *f).poll(c).is_ready())).await
        }

        fn outcome(child: usize, r: Result<usize, JoinError>) -> JoinOut {
            match r {
                Ok(v) if v == child => JoinOut::Ok(child),
                Ok(_) => JoinOut::Unknown,
                Err(e) if e.is_cancelled() => JoinOut::Cancelled(child),
                Err(e) if e.is_panic() => JoinOut::Panicked(child),
                Err(_) => JoinOut::Unknown,
            }
        }

        /// A set join, its task found by id among the members.
        fn set_outcome(
            held: &mut Held,
            r: Option<Result<(k::task::Id, usize), JoinError>>,
        ) -> Option<JoinOut> {
            let r = r?;
            let id = match &r {
                Ok((id, _)) => *id,
                Err(e) => e.id(),
            };
            let Some(pos) = held.members.iter().position(|m| m.1.id() == id) else {
                return Some(JoinOut::Unknown);
            };
            let child = held.members.remove(pos).0;
            Some(outcome(child, r.map(|(_, v)| v)))
        }

        fn behavior(b: Behavior) -> MissedTickBehavior {
            match b {
                Behavior::Burst => MissedTickBehavior::Burst,
                Behavior::Delay => MissedTickBehavior::Delay,
                Behavior::Skip => MissedTickBehavior::Skip,
            }
        }

        async fn step(cx: &Cx, id: usize, i: usize, held: &mut Held, s: &Step) -> Ev {
            match *s {
                Step::Sleep(d) => {
                    time::sleep(dur(d)).await;
                    Ev::Done
                }
                Step::SleepUntil(a) => {
                    time::sleep_until(cx.at(a)).await;
                    Ev::Done
                }
                Step::Reset { first, when, to } => {
                    let mut s = Box::pin(time::sleep(dur(first)));
                    let early_ready = match when {
                        ResetWhen::Unpolled => false,
                        ResetWhen::Polled => poll_once(&mut s).await,
                        ResetWhen::Completed => {
                            s.as_mut().await;
                            true
                        }
                    };
                    s.as_mut().reset(cx.at(to));
                    let deadline = cx.us(s.deadline());
                    s.await;
                    Ev::Reset {
                        early_ready,
                        deadline,
                    }
                }
                Step::Timeout { limit, inner } | Step::TimeoutAt { at: limit, inner } => {
                    let r = if matches!(s, Step::Timeout { .. }) {
                        time::timeout(dur(limit), fut(cx, inner)).await
                    } else {
                        time::timeout_at(cx.at(limit), fut(cx, inner)).await
                    };
                    if let Err(e) = &r {
                        cx.text(id, i, e);
                    }
                    Ev::Timeout {
                        elapsed: r.is_err(),
                    }
                }
                Step::Select(a, b) => {
                    let (fa, fb) = (fut(cx, a), fut(cx, b));
                    let won = k::select! {
                        biased;
                        _ = fa => 0,
                        _ = fb => 1,
                    };
                    Ev::Select(won)
                }
                Step::Interval {
                    start,
                    period,
                    behavior: b,
                    ref work,
                } => {
                    let p = dur(period);
                    let mut iv = match start {
                        Start::Plain => time::interval(p),
                        Start::In(d) => time::interval_at(Instant::now() + dur(d), p),
                        Start::Ago(d) => time::interval_at(cx.at(cx.now().saturating_sub(d)), p),
                    };
                    if let Some(b) = b {
                        iv.set_missed_tick_behavior(behavior(b));
                    }
                    for w in work {
                        let at = iv.tick().await;
                        cx.log(id, Some(i), Ev::Tick(cx.us(at)));
                        match *w {
                            Work::Nothing => {}
                            Work::Advance(d) => {
                                cx.log(id, Some(i), Ev::Advancing);
                                time::advance(dur(d)).await;
                            }
                            Work::Sleep(d) => time::sleep(dur(d)).await,
                            Work::Yield => k::task::yield_now().await,
                            Work::Reset => iv.reset(),
                            Work::ResetNow => iv.reset_immediately(),
                            Work::ResetAfter(d) => iv.reset_after(dur(d)),
                            Work::ResetAt(a) => iv.reset_at(cx.at(a)),
                        }
                    }
                    Ev::Done
                }
                Step::Yield => {
                    k::task::yield_now().await;
                    Ev::Done
                }
                Step::Advance(d) => {
                    cx.log(id, Some(i), Ev::Advancing);
                    time::advance(dur(d)).await;
                    Ev::Done
                }
                Step::AdvanceLazy(d) => {
                    cx.log(id, Some(i), Ev::Advancing);
                    let f = time::advance(dur(d));
                    cx.log(id, Some(i), Ev::Now(cx.now()));
                    f.await;
                    Ev::Done
                }
                Step::Spawn(c) => {
                    let h = k::spawn(task(cx.clone(), c));
                    cx.ids.lock().unwrap()[c] = Some(h.id());
                    held.handles.push((c, h));
                    Ev::Done
                }
                Step::Await(h) => {
                    if held.handles.is_empty() {
                        return Ev::NoHandle;
                    }
                    let (c, h) = held.handles.remove(h % held.handles.len());
                    let r = h.await;
                    if let Err(e) = &r {
                        cx.text(id, i, e);
                    }
                    Ev::Join(Some(outcome(c, r)), 0)
                }
                Step::Abort(h) => {
                    if held.handles.is_empty() {
                        return Ev::NoHandle;
                    }
                    let (c, h) = &held.handles[h % held.handles.len()];
                    h.abort();
                    Ev::Aborted(vec![*c])
                }
                Step::IsFinished(h) => {
                    if held.handles.is_empty() {
                        return Ev::NoHandle;
                    }
                    let (c, h) = &held.handles[h % held.handles.len()];
                    Ev::Finished(*c, h.is_finished())
                }
                Step::Detach(h) => {
                    if held.handles.is_empty() {
                        return Ev::NoHandle;
                    }
                    let (c, h) = held.handles.remove(h % held.handles.len());
                    held.detached.push((c, h.abort_handle()));
                    Ev::Done
                }
                Step::AbortDetached(h) => {
                    if held.detached.is_empty() {
                        return Ev::NoHandle;
                    }
                    let (c, h) = &held.detached[h % held.detached.len()];
                    h.abort();
                    Ev::Aborted(vec![*c])
                }
                Step::SetSpawn(c) => {
                    let h = held.set.spawn(task(cx.clone(), c));
                    cx.ids.lock().unwrap()[c] = Some(h.id());
                    held.members.push((c, h));
                    Ev::Done
                }
                Step::JoinNext => {
                    let r = held.set.join_next_with_id().await;
                    if let Some(Err(e)) = &r {
                        cx.text(id, i, e);
                    }
                    let out = set_outcome(held, r);
                    Ev::Join(out, held.set.len())
                }
                Step::TryJoinNext => {
                    let r = held.set.try_join_next_with_id();
                    let out = set_outcome(held, r);
                    Ev::TryJoin(out, held.set.len())
                }
                Step::SetAbort(m) => {
                    if held.members.is_empty() {
                        return Ev::NoHandle;
                    }
                    let (c, h) = &held.members[m % held.members.len()];
                    h.abort();
                    Ev::Aborted(vec![*c])
                }
                Step::AbortAll => {
                    held.set.abort_all();
                    Ev::Aborted(held.members.iter().map(|m| m.0).collect())
                }
                Step::Shutdown => {
                    held.set.shutdown().await;
                    Ev::Aborted(held.members.drain(..).map(|m| m.0).collect())
                }
                Step::DetachAll => {
                    held.set.detach_all();
                    held.members.clear();
                    Ev::Done
                }
                Step::IsElapsed { first, poll, wait } => {
                    let mut s = Box::pin(time::sleep(dur(first)));
                    if poll {
                        poll_once(&mut s).await;
                    }
                    time::sleep(dur(wait)).await;
                    Ev::Elapsed(s.is_elapsed())
                }
                Step::DropSet => {
                    held.set = JoinSet::new();
                    Ev::Aborted(held.members.drain(..).map(|m| m.0).collect())
                }
                Step::Panic => {
                    cx.log(id, Some(i), Ev::Panicking);
                    panic!("{}", super::SCRIPTED_PANIC);
                }
            }
        }
    };
}

pub mod on_tokio {
    use tokio as k;
    interpreter!();
}

pub mod on_weft {
    use weft as k;
    interpreter!();
}

/// The message of a script's `Panic` step.
pub const SCRIPTED_PANIC: &str = "scripted panic";

/// Keeps the panic hook from printing scripted panics (once per process;
/// every other panic still goes to the previous hook).
pub fn quiet_scripted_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info.payload().downcast_ref::<String>();
            if msg.is_none_or(|m| m != SCRIPTED_PANIC) {
                previous(info);
            }
        }));
    });
}
