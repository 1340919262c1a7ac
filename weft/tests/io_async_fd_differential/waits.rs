//! One wait and one read or write, in each of the ways a program can
//! wait on an `AsyncFd` (`readable`/`writable`, `ready`, the `_mut`
//! ones, `poll_*_ready` and their `_mut`, `async_io`/`async_io_mut`, a
//! dropped guard then `AsyncFd::try_io`/`try_io_mut`), for the
//! interpreter (`interp.rs`), written once in a macro it expands for both
//! crates.

/// `wait!`, `read_once` and `write_once`, for `interp_group!`.
macro_rules! waits {
    () => {
        /// Awaits `$f` within the limit: the guard, or the op's result
        /// for a failed wait, or `Stop`.
        macro_rules! wait {
            ($f:expr) => {
                match k::time::timeout(LIMIT, $f).await {
                    Err(_) => return Err(Stop),
                    Ok(Err(e)) => return Ok(Some(Err(e))),
                    Ok(Ok(g)) => g,
                }
            };
        }

        /// `Some(result)` of one read, or `None` if it would block (the
        /// readiness was cleared).
        type Once = Result<Option<io::Result<usize>>, Stop>;

        fn sole(fd: &mut Arc<Afd>) -> &mut Afd {
            Arc::get_mut(fd).expect("no waiter holds the AsyncFd between ops")
        }

        /// One wait for readability and one read into `buf`, as `how`
        /// says; `seen`: the first guard's readiness.
        async fn read_once(fd: &mut Arc<Afd>, how: Rd, buf: &mut [u8], seen: &mut Option<Ready>) -> Once {
            let blocked = |r: &io::Result<usize>| {
                matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            };
            Ok(match how {
                Rd::Guard => {
                    let mut g = wait!(fd.readable());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| rd(f.get_ref(), buf)).ok()
                }
                Rd::GuardManual => {
                    let mut g = wait!(fd.readable());
                    seen.get_or_insert(g.ready());
                    let r = rd(g.get_inner(), buf);
                    if blocked(&r) {
                        g.clear_ready();
                        None
                    } else {
                        Some(r)
                    }
                }
                Rd::MutGuard => {
                    let mut g = wait!(sole(fd).readable_mut());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| rd(f.get_ref(), buf)).ok()
                }
                Rd::Ready => {
                    let mut g = wait!(fd.ready(Interest::READABLE));
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| rd(f.get_ref(), buf)).ok()
                }
                Rd::ReadyMut => {
                    let mut g = wait!(sole(fd).ready_mut(Interest::READABLE));
                    seen.get_or_insert(g.ready());
                    let r = rd(g.get_inner_mut(), buf);
                    if blocked(&r) {
                        g.clear_ready_matching(Ready::READABLE);
                        None
                    } else {
                        Some(r)
                    }
                }
                Rd::AsyncIo => Some(wait!(async {
                    fd.async_io(Interest::READABLE, |f| rd(f, buf)).await.map(Ok)
                })),
                Rd::AsyncIoMut => Some(wait!(async {
                    sole(fd)
                        .async_io_mut(Interest::READABLE, |f| rd(f, buf))
                        .await
                        .map(Ok)
                })),
                Rd::PollReady => {
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_read_ready(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| rd(f.get_ref(), buf)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Rd::PollReadyMut => {
                    let fd = sole(fd);
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_read_ready_mut(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| rd(f.get_ref(), buf)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Rd::TryIo => {
                    let g = wait!(fd.readable());
                    seen.get_or_insert(g.ready());
                    drop(g);
                    let r = fd.try_io(Interest::READABLE, |f| rd(f, buf));
                    if blocked(&r) {
                        None
                    } else {
                        Some(r)
                    }
                }
            })
        }

        /// One wait for writability and one write of `data`.
        async fn write_once(fd: &mut Arc<Afd>, how: Wr, data: &[u8], seen: &mut Option<Ready>) -> Once {
            let blocked = |r: &io::Result<usize>| {
                matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            };
            Ok(match how {
                Wr::Guard => {
                    let mut g = wait!(fd.writable());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| wr(f.get_ref(), data)).ok()
                }
                Wr::MutGuard => {
                    let mut g = wait!(sole(fd).writable_mut());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| wr(f.get_ref(), data)).ok()
                }
                Wr::Ready => {
                    let mut g = wait!(fd.ready(Interest::WRITABLE));
                    seen.get_or_insert(g.ready());
                    let r = wr(g.get_inner(), data);
                    if blocked(&r) {
                        g.clear_ready_matching(Ready::WRITABLE);
                        None
                    } else {
                        Some(r)
                    }
                }
                Wr::AsyncIo => Some(wait!(async {
                    fd.async_io(Interest::WRITABLE, |f| wr(f, data)).await.map(Ok)
                })),
                Wr::AsyncIoMut => Some(wait!(async {
                    sole(fd)
                        .async_io_mut(Interest::WRITABLE, |f| wr(f, data))
                        .await
                        .map(Ok)
                })),
                Wr::PollReady => {
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_write_ready(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| wr(f.get_ref(), data)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Wr::PollReadyMut => {
                    let fd = sole(fd);
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_write_ready_mut(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| wr(f.get_ref(), data)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Wr::TryIo | Wr::TryIoMut => {
                    let g = wait!(fd.writable());
                    seen.get_or_insert(g.ready());
                    drop(g);
                    let r = if how == Wr::TryIo {
                        fd.try_io(Interest::WRITABLE, |f| wr(f, data))
                    } else {
                        sole(fd).try_io_mut(Interest::WRITABLE, |f| wr(f, data))
                    };
                    if blocked(&r) {
                        None
                    } else {
                        Some(r)
                    }
                }
            })
        }
    };
}
pub(crate) use waits;
