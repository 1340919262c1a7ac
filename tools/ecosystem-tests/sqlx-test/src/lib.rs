//! Connections to the database that `DATABASE_URL` names, for sqlx's own
//! test files (their `sqlx_test::{new, pool, setup_if_needed}`).

use sqlx::pool::{Pool, PoolOptions};
use sqlx::{Connection, Database};
use std::sync::Once;

/// Installs the `Any` drivers once per process.
pub fn setup_if_needed() {
    static SETUP: Once = Once::new();
    SETUP.call_once(sqlx::any::install_default_drivers);
}

fn database_url() -> anyhow::Result<String> {
    std::env::var("DATABASE_URL")
        .map_err(|_| anyhow::anyhow!("DATABASE_URL must name the test database"))
}

/// A new connection to the test database.
pub async fn new<DB: Database>() -> anyhow::Result<DB::Connection> {
    setup_if_needed();
    Ok(DB::Connection::connect(&database_url()?).await?)
}

/// A small pool of connections to the test database.
pub async fn pool<DB: Database>() -> anyhow::Result<Pool<DB>> {
    setup_if_needed();
    Ok(PoolOptions::<DB>::new()
        .min_connections(0)
        .max_connections(5)
        .connect(&database_url()?)
        .await?)
}
