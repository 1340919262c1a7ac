//! Ruby's version as `cfg`s (`ruby_lt_3_2`, `ruby_gte_3_2`, ...), from the
//! Ruby that rb-sys builds against. Code that reads Ruby's structs (the
//! IO's read buffer, `src/scheduler.rs`) compiles only for the versions
//! whose layout and use it knows. Only the cfgs: the linking is rb-sys's.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = rb_sys_env::load()?;
    env.print_cargo_rerun_if_changed();
    env.print_cargo_rustc_cfg();
    Ok(())
}
