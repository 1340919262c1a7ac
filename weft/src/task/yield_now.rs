//! `yield_now`: let other tasks run before continuing.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yield to the scheduler: the task continues after the tasks that are
/// ready now *and* after the I/O and timer drivers have been polled, as in
/// Tokio. On current_thread, `block_on`'s future gets its turn in between
/// too. Outside a runtime's thread it wakes itself at once.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// for _ in 0..3 {
///     weft::task::yield_now().await;
/// }
/// # });
/// ```
pub async fn yield_now() {
    YieldNow { yielded: false }.await
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        crate::runtime::context::defer(cx.waker());
        Poll::Pending
    }
}
