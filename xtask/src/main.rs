//! `cargo xtask`: the one entry point for building, booting and testing.
//!
//!     cargo xtask run  [OPTIONS] [-- PROGRAM ARGS...]   boot in QEMU
//!     cargo xtask test [OPTIONS] [-- SUITE...]          every test, host and QEMU (or some suites)
//!     cargo xtask image [OPTIONS]                       just build the disk image
//!     cargo xtask prof [OPTIONS] PROGRAM [ARGS...]      run a profiled program, gprof it
//!     cargo xtask gdb [OPTIONS] [-- PROGRAM ARGS...]    the kernel under GDB
//!
//! Argument parsing is kept apart from what the commands do (`options.rs`),
//! and every failure is one line on stderr and a non-zero exit: a bad flag or a
//! missing tool never ends in a Rust backtrace.

mod build;
mod docs;
mod gdb;
mod options;
mod prof;
mod qemu;
mod setup;
mod test;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = options::parse(&args).and_then(|command| match command {
        options::Command::Help => {
            print!("{}", options::USAGE);
            Ok(ExitCode::SUCCESS)
        }
        options::Command::Run(opts) => qemu::run(&opts),
        options::Command::Image(opts) => {
            build::image(&opts, &build::Boot::normal(&opts)).map(|image| {
                println!("{}", image.display());
                ExitCode::SUCCESS
            })
        }
        options::Command::Test(opts) => test::run(&opts),
        options::Command::Prof(opts) => prof::run(&opts),
        options::Command::Gdb(opts) => gdb::run(&opts, opts.batch.as_ref()),
    });
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::from(2)
        }
    }
}
