//! `yield_now`: let other tasks run before continuing.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yield to the scheduler: the task goes to the back of its worker's run
/// queue (never the LIFO slot) and continues after the tasks ahead of it.
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
        // A wake during its own poll is treated as a yield by the scheduler.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
